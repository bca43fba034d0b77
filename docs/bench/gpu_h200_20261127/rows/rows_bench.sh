#!/usr/bin/env bash
# Session 15's second GPU check: the row-block GEMV (matmul_rows.comp) against the plain GEMV in
# whole forwards and on the shipped model. Run through tools/gpu_carry.sh's setup (unpacked .gl).
set -uo pipefail
out=$1; mkdir -p "$out/r"; r=$out/r
v=build-gpu/cli/vkspec
deadline=${DEADLINE:-120}
t() { local name=$1; shift; if [ "$SECONDS" -gt "$deadline" ]; then echo "== $name: skipped at $SECONDS s"; return; fi; echo "== $name: $*"; timeout 40 "$@" > "$r/$name.txt" 2>&1; echo "== $name: exit $?"; grep -E "^(AR step|window|GPU time)" "$r/$name.txt" | head -12; }
for tile in 0 8,4 8,8 16,4 4,8; do
  t "B_rows_$tile" env VKSPEC_GEMV_ROWS_TILE=$tile $v bench --synthetic B --grid 16 --repeat 20 --windows 1,4,8,16 --json "$r/B_rows_$tile.json"
done
for tile in 0 8,4 8,8; do
  t "XL_rows_$tile" env VKSPEC_GEMV_ROWS_TILE=$tile $v bench --synthetic XL --grid 16 --repeat 20 --windows 1,8,16 --json "$r/XL_rows_$tile.json"
done
for tile in 0 8,4; do
  t "methods_rows_$tile" env VKSPEC_GEMV_ROWS_TILE=$tile $v bench --methods ar,sjd,scd-mc,scd-gs,lantern,zipar --images 24 --classifier none --json "$r/methods_rows_$tile.json"
  grep -E "^(ar|sjd|scd|lantern|zipar) " "$r/methods_rows_$tile.txt" | head -8
done
for tile in 8,2,1 16,2,1 4,2,1; do
  t "B_ar_$tile" env VKSPEC_GEMV_ROWS_TILE=$tile $v bench --synthetic B --grid 16 --repeat 20 --windows 1,4 --json "$r/B_ar_$tile.json"
done
for tile in 8,4 16,4; do
  t "B_rows136_$tile" env VKSPEC_GEMV_MAX_ROWS=136 VKSPEC_GEMV_ROWS_TILE=$tile $v bench --synthetic B --grid 16 --repeat 20 --windows 1,32,64 --json "$r/B_rows136_$tile.json"
done
