#!/bin/sh
# Build kwin-relay.exe reproducibly with Debian's mingw-w64: fixed flags, stripped, no PE timestamp,
# no build paths. Usage: build.sh [OUTPUT]  (default: kwin-relay.exe next to this script)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/kwin-relay.exe"}
cc=${CC:-x86_64-w64-mingw32-gcc}
cd "$here"
export SOURCE_DATE_EPOCH=0 LC_ALL=C
"$cc" -std=c99 -D_WIN32_WINNT=0x0600 -Os -Wall -Wextra -Werror -fno-ident -ffile-prefix-map="$here"=. \
  -s -Wl,--no-insert-timestamp -Wl,--build-id=none \
  -o "$out" winrelay.c mux.c -lws2_32
