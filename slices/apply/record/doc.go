// Package record is the applied record (/var/lib/numa-partition/applied.json):
// what apply wrote and started, read by the next apply to diff against,
// by status to see drift and by remove to undo it. It is a leaf of
// slices/apply: its types, their JSON (docs/apply.md), reading it (a
// path apply cannot have written refused) and writing it atomically;
// nothing here decides what goes into it.
package record
