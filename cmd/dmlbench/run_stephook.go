package main

import "github.com/dmlbench/dmlbench/trainers"

// onRunStep, when set, sees each progress report of `dmlbench run` before
// it is shown. It is nil in the command; a test's child process
// (TestHelperChild) sets it to hold a run at a known training step, so a
// kill lands mid-epoch whatever the machine's speed.
var onRunStep func(trainers.Progress)
