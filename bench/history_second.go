package main

import _ "embed"

// historySecond records the second round's changes and the targets it
// did not meet, kept by hand like history.
//
//go:embed history-second.md
var historySecond string

// historyThird records the third round's changes and the targets it did
// not meet.
//
//go:embed history-third.md
var historyThird string
