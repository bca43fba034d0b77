#!/usr/bin/env bash
# Extracts the Vulkan implementations the tests run on besides the system's lavapipe into a cache
# folder, installing nothing and leaving the system's driver alone:
#   swiftshader  Google's CPU Vulkan (Vulkan 1.3, subgroup 4, no push descriptors, no 16-bit
#                storage, no int64, 256-byte offset alignment), libvk_swiftshader.so from Debian's
#                chromium-common;
#   lavapipe25   Mesa 25.0 lavapipe from bookworm-backports' mesa-vulkan-drivers, with the libdrm2
#                and libdrm-amdgpu1 it needs from there beside it.
# Each gets DIR/NAME/icd.json and DIR/NAME/env (VK_DRIVER_FILES, LD_LIBRARY_PATH), which
# tools/with-driver.sh reads. Idempotent: a driver already extracted is kept. Packages come from a
# private apt state in DIR/apt, so the system's sources and package lists are not touched either.
# Its sources list is derived from the machine's own apt sources (one-line *.list and deb822
# *.sources files): the URIs the machine uses for bookworm (main), bookworm-updates and
# bookworm-security, and bookworm-backports -- on the bookworm URIs when the machine has no
# backports entry. The machine's apt.conf (proxies, auth, keyrings) applies as usual; no host is
# named here. A machine with no bookworm source is an error.
# Usage: tools/install-drivers.sh [DIR]
#        tools/install-drivers.sh --print-sources   (prints the private sources list and exits)
#   (default DIR: $VKSPEC_DRIVER_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/drivers)
set -euo pipefail

# The machine's apt source files: the main list and the *.list / *.sources files of the parts
# folder, as the machine's apt configuration names them.
machine_source_files() {
  local list=/etc/apt/sources.list parts=/etc/apt/sources.list.d/ f
  if command -v apt-config >/dev/null 2>&1; then
    eval "$(apt-config shell list Dir::Etc::SourceList/f parts Dir::Etc::SourceParts/d)"
  fi
  [ -f "$list" ] && echo "$list"
  for f in "${parts%/}"/*.list "${parts%/}"/*.sources; do
    [ -f "$f" ] && echo "$f"
  done
  return 0
}

# Every enabled "deb" entry of the given source files, one "OPTIONS<TAB>URI<TAB>SUITE" line each
# (OPTIONS: the one-line format's "[...]" or, from a deb822 stanza, its Signed-By / Architectures /
# Trusted fields in that form; empty when none).
machine_deb_entries() {
  local f
  for f in "$@"; do
    case $f in
      *.sources) awk '
        function flush(   n, m, i, j, u, s, opts) {
          if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no" && uris != "" && suites != "") {
            opts = ""
            if (signed != "" && !signed_multi) opts = opts " signed-by=" signed
            if (archs != "") { gsub(/[ \t]+/, ",", archs); opts = opts " arch=" archs }
            if (trusted != "") opts = opts " trusted=" trusted
            if (opts != "") opts = "[" substr(opts, 2) "]"
            n = split(uris, u, /[ \t]+/); m = split(suites, s, /[ \t]+/)
            for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
              if (u[i] != "" && s[j] != "") printf "%s\t%s\t%s\n", opts, u[i], s[j]
          }
          types = enabled = uris = suites = signed = archs = trusted = ""; signed_multi = 0; key = ""
        }
        BEGIN { flush() }
        /^#/ { next }
        /^[ \t]*$/ { flush(); next }
        /^[ \t]/ { if (key == "signed-by") signed_multi = 1; next }   # continuation (inline key)
        {
          i = index($0, ":"); if (i == 0) next
          key = tolower(substr($0, 1, i - 1)); v = substr($0, i + 1)
          sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
          if (key == "types") types = v; else if (key == "enabled") enabled = v
          else if (key == "uris") uris = v; else if (key == "suites") suites = v
          else if (key == "signed-by") { signed = v; if (v == "") signed_multi = 1 }
          else if (key == "architectures") archs = v; else if (key == "trusted") trusted = v
        }
        END { flush() }' "$f" ;;
      *) awk '
        { sub(/#.*/, "") }
        $1 == "deb" {
          opts = ""; i = 2
          if ($2 ~ /^\[/) {
            while (i <= NF) { opts = opts (opts == "" ? "" : " ") $i; if ($i ~ /\]$/) break; i++ }
            i++
          }
          if (i + 1 <= NF) printf "%s\t%s\t%s\n", opts, $i, $(i + 1)
        }' "$f" ;;
    esac
  done
}

# The private sources list, on stdout: bookworm main, bookworm-updates / bookworm-security main
# where the machine has them, bookworm-backports main (on the bookworm URIs if the machine has
# none), each on the URIs (and with the options) the machine's own sources use.
private_sources() {
  local files entries
  mapfile -t files < <(machine_source_files)
  entries=$(machine_deb_entries ${files[@]+"${files[@]}"})
  if ! printf '%s\n' "$entries" | awk -F'\t' '$3 == "bookworm" { found = 1 } END { exit !found }'; then
    echo "install-drivers: the machine's apt sources (${files[*]:-none}) have no \"deb URI bookworm ...\"" \
         "entry; expected a Debian 12 (bookworm) source, one-line (deb URI bookworm main) or deb822" \
         "(Types: deb, URIs: URI, Suites: bookworm), whose URI this script reuses for bookworm and" \
         "bookworm-backports" >&2
    return 1
  fi
  printf '%s\n' "$entries" | awk -F'\t' '
    function line(opts, uri, suite,   k) {
      k = opts " " uri " " suite
      if (!(k in seen)) { seen[k] = 1; print "deb " (opts == "" ? "" : opts " ") uri " " suite " main" }
    }
    NF >= 3 { n++; o[n] = $1; u[n] = $2; s[n] = $3; if ($3 == "bookworm-backports") bpo = 1 }
    END {
      for (i = 1; i <= n; i++) if (s[i] == "bookworm") line(o[i], u[i], s[i])
      for (i = 1; i <= n; i++) if (s[i] == "bookworm-updates" || s[i] == "bookworm-security") line(o[i], u[i], s[i])
      for (i = 1; i <= n; i++)
        if (s[i] == "bookworm-backports" || (!bpo && s[i] == "bookworm")) line(o[i], u[i], "bookworm-backports")
    }'
}

if [ "${1:-}" = --print-sources ]; then
  private_sources
  exit
fi

dir=${1:-${VKSPEC_DRIVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vkspec/drivers}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -f "$dir/swiftshader/env" ] && [ -f "$dir/lavapipe25/env" ] && exit 0

apt_dir="$dir/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
private_sources > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::Archives=$apt_dir/archives"
          -o "Dir::State::Status=$apt_dir/status" -o APT::Sandbox::User="$(id -un)" -qq)
touch "$apt_dir/status"
echo "install-drivers: fetching package lists into $apt_dir" >&2
apt-get "${apt_opts[@]}" update >&2
download() {  # package[/suite] ... -> the .deb files, in $apt_dir/debs
  (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "$@" >&2)
}

write_driver() {  # name library_path api_version ld_library_path
  local name=$1 lib=$2 api=$3 ld=$4
  printf '{"file_format_version": "1.0.0", "ICD": {"library_path": "%s", "api_version": "%s"}}\n' \
    "$lib" "$api" > "$dir/$name/icd.json"
  { echo "VK_DRIVER_FILES=$dir/$name/icd.json"; echo "LD_LIBRARY_PATH=$ld"; } > "$dir/$name/env.tmp"
  mv "$dir/$name/env.tmp" "$dir/$name/env"  # last: its presence means the driver is complete
  echo "install-drivers: $name in $dir/$name" >&2
}

if [ ! -f "$dir/swiftshader/env" ]; then
  rm -rf "$dir/swiftshader" && mkdir -p "$dir/swiftshader"
  download chromium-common
  deb=$(ls "$apt_dir"/debs/chromium-common_*.deb | tail -n 1)
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir/swiftshader" ./usr/lib/chromium/libvk_swiftshader.so
  basename "$deb" > "$dir/swiftshader/package"
  write_driver swiftshader "$dir/swiftshader/usr/lib/chromium/libvk_swiftshader.so" 1.3.0 ""
fi

if [ ! -f "$dir/lavapipe25/env" ]; then
  rm -rf "$dir/lavapipe25" && mkdir -p "$dir/lavapipe25"
  download mesa-vulkan-drivers/bookworm-backports libdrm2/bookworm-backports libdrm-amdgpu1/bookworm-backports
  : > "$dir/lavapipe25/package"
  for p in mesa-vulkan-drivers libdrm2 libdrm-amdgpu1; do
    deb=$(ls "$apt_dir"/debs/${p}_*bpo12*.deb | tail -n 1)
    dpkg-deb -x "$deb" "$dir/lavapipe25"
    basename "$deb" >> "$dir/lavapipe25/package"
  done
  lib=$(find "$dir/lavapipe25/usr/lib" -name libvulkan_lvp.so | head -n 1)
  [ -n "$lib" ] || { echo "install-drivers: no libvulkan_lvp.so in mesa-vulkan-drivers" >&2; exit 1; }
  write_driver lavapipe25 "$lib" 1.4.305 "$(dirname "$lib")"
fi
rm -rf "$apt_dir"  # the lists and packages: only the extracted drivers are kept
