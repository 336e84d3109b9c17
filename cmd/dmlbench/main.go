// Command dmlbench trains and evaluates deep-metric-learning embeddings.
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	_ "go4.org/unsafe/assume-no-moving-gc" // Go 1.26 start-up fix for gorgonia's dependencies
)

// Version is set by -ldflags "-X main.Version=..." in release builds.
var Version = "0.1.0-dev"

var commands []*cli.Command

func register(c *cli.Command) { commands = append(commands, c) }

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func newApp() *cli.App {
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	return &cli.App{
		Name:  "dmlbench",
		Usage: "train and measure deep-metric-learning embeddings",
		Description: `Examples:
   dmlbench eval --emb test_emb.npy --labels test_labels.npy
   dmlbench run --dataset omniglot --loss margin --miner distance --sampler spc-2 --out runs/margin-s0
   dmlbench report runs/ --format markdown
   dmlbench list metrics`,
		Version:         Version,
		Commands:        commands,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err}
		},
	}
}

func main() { os.Exit(run(os.Args, os.Stdout, os.Stderr)) }

// run executes the CLI and returns the process exit code: 0 success,
// 1 error (one line on stderr), 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if err := checkKernels(stderr); err != nil {
		fmt.Fprintln(stderr, "dmlbench:", err)
		return 2
	}
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	err := app.Run(args)
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintln(stderr, "dmlbench:", msg)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}
