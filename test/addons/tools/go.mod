// Module tools holds the add-on build's own helpers (stdlib only).
module github.com/numa-partition/numa-partition/test/addons/tools

go 1.26.0
