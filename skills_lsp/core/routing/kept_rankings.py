"""Test-query rankings kept between runs: what a warm start answers its test queries from.

Scoring a workspace's test queries is about 2 ms a query with bm25f at 16,000 skills (seconds
with an embedding scorer), and a language server does it at every start for the same skills and
the same queries. A ranking (what `queries.run_case` selects before judging a case) depends only
on the request, its policy, the skills in index order and the code and model that scored them;
so the rankings of the last run are kept, in one frame per scorer in the index's cache folder
(`files.frames`: written atomically, checked by SHA-256, a damaged, cut or foreign file ignored),
under a key (`rankings_key`) that holds everything else they rest on:

- the scorer's name, the package version, bm25f's parameters and the tokenizers' versions, and
  the stamp (path, size, mtime) of every file of this package's routing code and data, and of the
  modules that order and tie-break skills (a development change is a new key too);
- for the embedding scorers, the model's name and its modules' stamps;
- the documents, in index order (their `SkillIndex.documents_digest`: path, content hash, kind,
  name and tags of each, what the scorers' own saved states are keyed by; the caller gives it: a
  warm load has it from the store, so it is not paid again).

Each ranking is kept by its request: the query and the whole policy. A skill in a ranking is its
position in index order; it comes back as the summary of the document at that position now, so
a kept ranking reads as scoring now would (scores and order as saved, bit for bit). Kept
rankings are only for the documents they were scored over: the caller asks for them, and saves
them, only while its index holds those documents (`same_documents`).
"""

from __future__ import annotations

import importlib.util
import operator
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skills_lsp._version import __version__
from skills_lsp.core.files.frames import FrameFolder
from skills_lsp.core.index.document_path import path_text
from skills_lsp.core.routing.scorer import EMBEDDING_MODULES, SelectionPolicy, SkillMatch, embeds, scorer_for
from skills_lsp.core.routing.terms import TERMS_VERSION, Bm25fParameters
from skills_lsp.core.routing.tokens import TOKENS_VERSION

if TYPE_CHECKING:
    from skills_lsp.core.index.skill_index import SkillDocument, SkillIndex

FORMAT = 1
FILE = "test-query-rankings-{}.bin"  # per scorer, in the index's cache folder
KIND = "test-query-rankings"
_ROUTING = Path(__file__).resolve().parent
_CORE = _ROUTING.parent
# Besides the routing package: what orders, tie-breaks and filters skills in a ranking.
_ALSO_STAMPED = (_CORE / "text.py", _CORE / "index" / "skill_index.py", _CORE / "index" / "document_path.py")

# A request: query, top_k, min_score, include_tags, exclude_tags, tokenizer, scorer.
Request = tuple[str, int, float, tuple[str, ...], tuple[str, ...], str, str]
# A ranking as kept: (score, position of the skill in index order), best first.
Positions = tuple[tuple[float, int], ...]


def request_of(query: str, policy: SelectionPolicy) -> Request:
    """What a ranking is kept by: the query and every field of the policy it was selected with."""
    return (
        query,
        policy.top_k,
        policy.min_score,
        tuple(policy.include_tags),
        tuple(policy.exclude_tags),
        policy.tokenizer,
        policy.scorer,
    )


@cache
def code_stamps() -> tuple[tuple[str, int, int], ...]:
    """(path, size, mtime in ns) of every file of the routing package (its data included) and of
    `_ALSO_STAMPED`: once per process, as the code that runs was read about then."""
    paths = [os.path.join(top, name) for top, _, names in os.walk(_ROUTING) for name in names]
    return _stamps(sorted(paths) + [str(path) for path in _ALSO_STAMPED])


def _stamps(paths: Iterable[str]) -> tuple[tuple[str, int, int], ...]:
    found = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found.append((path, -1, -1))
            continue
        found.append((path, info.st_size, info.st_mtime_ns))
    return tuple(found)


def model_stamps(index: SkillIndex, scorer: str) -> tuple[object, ...]:
    """For a scorer that embeds skills, its model's name and the stamps of every embedding
    module's file (an upgrade of the model's package changes them); else nothing."""
    if not embeds([scorer]):
        return ()
    model = getattr(scorer_for(index, "semantic"), "model", None)
    origins = []
    for modules in EMBEDDING_MODULES.values():
        for module in modules:
            spec = importlib.util.find_spec(module)
            origins.append(spec.origin if spec is not None and spec.origin else module)
    return (getattr(model, "name", None), _stamps(origins))


def rankings_key(index: SkillIndex, scorer: str, size: int, digest: str) -> str:
    """Everything the rankings of `scorer` over `size` documents of `index` whose documents_digest
    is `digest` rest on but the requests themselves."""
    code = (FORMAT, __version__, sys.version, scorer, TERMS_VERSION, TOKENS_VERSION, Bm25fParameters())
    return repr((code, code_stamps(), model_stamps(index, scorer), size, digest))


def same_documents(kept: Sequence[SkillDocument], docs: Sequence[SkillDocument]) -> bool:
    """Whether `docs` are `kept` as far as their documents_digest can tell, position by position:
    the same objects, or documents with the same path, content hash, kind, name and tags (an
    editor's buffer of an unchanged file replaces its document with an equal one)."""
    if len(kept) != len(docs):
        return False
    if all(map(operator.is_, kept, docs)):
        return True
    return all(a is b or _digested(a) == _digested(b) for a, b in zip(kept, docs, strict=True))


def _digested(doc: SkillDocument) -> tuple[object, ...]:
    """What documents_digest reads of a document."""
    return (path_text(doc), doc.hash, doc.kind, doc.name, doc.tags)


@dataclass
class KeptRankings:
    """The rankings of one scorer over one list of documents: those read from the last run's
    file and those scored since (`new`), by request."""

    key: str
    docs: Sequence[SkillDocument]  # the documents scored over, in index order
    positions: dict[Request, Positions] = field(default_factory=dict)
    new: dict[Request, tuple[SkillMatch, ...]] = field(default_factory=dict)

    def ranking(self, request: Request) -> tuple[SkillMatch, ...] | None:
        """The kept ranking of `request`, its skills the summaries of `docs` now; None when there
        is none (or what was read is not a ranking of these documents)."""
        found = self.new.get(request)
        if found is not None:
            return found
        kept = self.positions.get(request)
        if not isinstance(kept, tuple):
            return None
        size = len(self.docs)
        try:
            if not all(type(score) is float and type(at) is int and 0 <= at < size for score, at in kept):
                return None
        except (TypeError, ValueError):  # an entry of another shape
            return None
        return tuple(SkillMatch(score, self.docs[at].summary()) for score, at in kept)

    def keep(self, request: Request, ranking: tuple[SkillMatch, ...]) -> None:
        """A ranking just scored over `docs`."""
        self.new[request] = ranking

    def to_save(self, requests: Iterable[Request]) -> dict[Request, Positions] | None:
        """The rankings of `requests` as positions, for `save_rankings`; None when one is not
        kept, or names a skill that is not one document of `docs`."""
        wanted = list(dict.fromkeys(requests))
        at: dict[tuple[str, str, str], int] = {}
        if self.new:
            for number, doc in enumerate(self.docs):
                at.setdefault((doc.name, path_text(doc), doc.hash), number)
            if len(at) != len(self.docs):
                return None  # two documents the same to a summary: a position would be a guess
        saved: dict[Request, Positions] = {}
        for request in wanted:
            if request in self.new:
                ranking = []
                for match in self.new[request]:
                    place = at.get((match.skill.name, str(match.skill.path), match.skill.hash))
                    if place is None:
                        return None
                    ranking.append((match.score, place))
                saved[request] = tuple(ranking)
            elif request in self.positions:
                saved[request] = self.positions[request]
            else:
                return None
        return saved


def read_rankings(
    index: SkillIndex, scorer: str, docs: Sequence[SkillDocument], digest: str
) -> KeptRankings | None:
    """The rankings the last run kept for `scorer` over exactly `docs`, whose documents_digest is
    `digest` (none read when its file is missing, damaged or for anything else); None when the
    index keeps nothing between runs."""
    frames = index.frames
    if frames is None:
        return None
    key = rankings_key(index, scorer, len(docs), digest)
    payload = frames.read(FILE.format(scorer), KIND)
    kept = KeptRankings(key, docs)
    if isinstance(payload, dict) and payload.get("key") == key and isinstance(payload.get("rankings"), dict):
        kept.positions = payload["rankings"]
    return kept


def save_rankings(frames: FrameFolder, scorer: str, key: str, rankings: Mapping[Request, Positions]) -> bool:
    """Write `rankings` (KeptRankings.to_save) under `key`, in place of the last ones."""
    payload: dict[str, Any] = {"key": key, "rankings": dict(rankings)}
    return frames.write(FILE.format(scorer), KIND, payload)
