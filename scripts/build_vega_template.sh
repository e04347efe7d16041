#!/usr/bin/env bash
# Build infra/dvc/plots_offline.html: a `dvc plots show --html-template` page with
# vega, vega-lite and vega-embed inlined, so the plots render with no network.
#
# DVC's default page loads those three libraries from a CDN through the `{scripts}`
# placeholder. This template leaves `{scripts}` out on purpose (DVC only substitutes
# placeholders that are present), so the CDN <script src> tags are never inserted;
# it keeps `{plot_divs}` (required) and `{refresh_tag}`.
#
# Usage: scripts/build_vega_template.sh [OUT]   (default infra/dvc/plots_offline.html)
# Versions are pinned for a repeatable file; override with VEGA_VERSION etc.
set -euo pipefail

VEGA_VERSION="${VEGA_VERSION:-5.33.1}"
VEGA_LITE_VERSION="${VEGA_LITE_VERSION:-5.23.0}"
VEGA_EMBED_VERSION="${VEGA_EMBED_VERSION:-6.29.0}"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$repo_root/infra/dvc/plots_offline.html}"

command -v npm >/dev/null || { echo "error: npm not found (apt-get install -y npm)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# npm pack downloads only the package tarball (no dependency tree); the UMD
# bundles under build/ are self-contained.
for spec in "vega@$VEGA_VERSION" "vega-lite@$VEGA_LITE_VERSION" "vega-embed@$VEGA_EMBED_VERSION"; do
  name="${spec%@*}"
  tgz="$(cd "$work" && npm pack --silent "$spec")"
  mkdir -p "$work/$name"
  tar -xzf "$work/$tgz" -C "$work/$name" --strip-components=1
  js="$work/$name/build/$name.min.js"
  [ -s "$js" ] || { echo "error: $spec has no build/$name.min.js" >&2; exit 1; }
done

# A literal "</script" inside inlined JS would close the tag early; "<\/script" is
# the same string to JavaScript. DVC replaces "{plot_divs}", "{scripts}" and
# "{refresh_tag}" by plain string substitution, so none may occur inside the JS.
inline_js() {
  local js="$1"
  if grep -qF -e '{plot_divs}' -e '{scripts}' -e '{refresh_tag}' "$js"; then
    echo "error: $js contains a DVC placeholder string" >&2; exit 1
  fi
  sed 's#</script#<\\/script#gI' "$js"
}

mkdir -p "$(dirname "$out")"
tmp_out="$(mktemp "$(dirname "$out")/.tmp-plots_offline-XXXXXX")"
{
  cat <<'HEAD'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{refresh_tag}
<title>DVC plots (offline)</title>
HEAD
  for name in vega vega-lite vega-embed; do
    ver_var="$(echo "${name}_VERSION" | tr 'a-z-' 'A-Z_')"
    echo "<!-- $name ${!ver_var} (BSD-3-Clause), inlined from the npm registry by scripts/build_vega_template.sh -->"
    echo '<script type="text/javascript">'
    inline_js "$work/$name/build/$name.min.js"
    echo
    echo '</script>'
  done
  cat <<'TAIL'
<style>
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5rem; color: #222; }
  table { border-spacing: 15px; }
</style>
</head>
<body>
{plot_divs}
</body>
</html>
TAIL
} > "$tmp_out"
chmod 644 "$tmp_out"
mv -f "$tmp_out" "$out"
echo "wrote $out ($(wc -c < "$out") bytes)"
