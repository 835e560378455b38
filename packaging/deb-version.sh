#!/bin/sh
# Debian version from `git describe`: a release tag (v1.2.3) as is, anything
# else as 0.0.0~git<describe> so it sorts below every release.
v=${1:-dev}
case "$v" in
  v[0-9]*.*) echo "${v#v}" ;;
  *) echo "0.0.0~git$(printf %s "$v" | tr -c '[:alnum:].' '.')" ;;
esac
