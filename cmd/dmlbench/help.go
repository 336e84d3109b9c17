package main

import (
	"embed"
	"strings"
)

// helpFiles hold the long descriptions of the commands, one file each.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText is the description help/NAME.txt, without its final newline.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("dmlbench: no help text " + name) // the files are compiled in: a missing one is a build error
	}
	return strings.TrimSuffix(string(b), "\n")
}
