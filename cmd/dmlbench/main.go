// Command dmlbench trains and evaluates deep-metric-learning embeddings.
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	_ "go4.org/unsafe/assume-no-moving-gc" // Go 1.26 start-up fix for gorgonia's dependencies

	"github.com/dmlbench/dmlbench/internal/procout"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/internal/usage"
)

// Version is set by -ldflags "-X main.Version=..." in release builds.
var Version = "0.1.0-dev"

// commands is the command table newApp builds (buildCommands).
var commands []*cli.Command

// register adds c to the command table; each command's file has one
// function that calls it, and buildCommands calls those in a fixed order.
func register(c *cli.Command) { commands = append(commands, c) }

// commandAdders add the commands, in an order where each finds what it
// builds on: data before its audit subcommand, eval before its names,
// shard subcommands, compare and show (which take eval's flags), plot
// before plot distractors.
var commandAdders = []func(){
	addData, addDataAudit, addEval, addEvalNames, addEvalShard, addCompare, addShow, addExternalCell, addList,
	addPlot, addPlotDistractors, addReport, addRun, addSpectra, addSuite, addTune, addVersion,
}

// buildMu serialises buildCommands: tests build apps in parallel.
var buildMu sync.Mutex

// buildCommands builds a fresh command table, sorted by name.
func buildCommands() []*cli.Command {
	buildMu.Lock()
	defer buildMu.Unlock()
	commands = nil
	for _, add := range commandAdders {
		add()
	}
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	return commands
}

// usageError marks errors in how the command was called (exit code 2).
type usageError = usage.Error

func usagef(format string, a ...any) error { return usage.Errorf(format, a...) }

// defaultFlagStringer is urfave/cli's own flag line.
var defaultFlagStringer = cli.FlagStringer

// flagString writes every flag as it is typed in the examples: a
// one-letter name such as k is shown as --k (urfave/cli would show -k;
// both parse).
func flagString(f cli.Flag) string {
	s := defaultFlagStringer(f)
	if strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") {
		s = "-" + s
	}
	return s
}

// stringerOnce sets urfave/cli's flag stringer once (apps are built in
// parallel in tests).
var stringerOnce sync.Once

func newApp() *cli.App {
	stringerOnce.Do(func() { cli.FlagStringer = flagString })
	commands := buildCommands()
	for _, c := range commands {
		setUsageHandlers(c, c.Name)
	}
	return &cli.App{
		Name:  "dmlbench",
		Usage: "train and measure deep-metric-learning embeddings",
		Description: `Examples:
   dmlbench eval --emb out/px/emb.npy --labels out/px/labels.npy
   dmlbench run --dataset omniglot --loss margin --miner distance --sampler spc-2 --seed 1 --out runs/margin-s1
   dmlbench report runs/omniglot-example --format markdown
   dmlbench tune docs/examples/omniglot-tune.yaml --parallel 2
   dmlbench list metrics`,
		Version:         Version,
		Commands:        commands,
		HideHelpCommand: true,
		// Repeatable flags (--emb) take file names, which may hold commas.
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{Err: withFlagSuggestion(err, nil)}
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return unknownCommand(c.Args().First(), "", commands)
			}
			return cli.ShowAppHelp(c)
		},
	}
}

// setUsageHandlers makes a bad flag of c (and of its subcommands) a usage
// error (exit 2, one line on stderr, no help on stdout), an unknown flag
// or subcommand name an error suggesting the nearest one, and a missing
// required flag a usage error naming it.
func setUsageHandlers(c *cli.Command, path string) {
	if c.OnUsageError == nil {
		flags := c.Flags
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError{Err: fmt.Errorf("%s: %w (see dmlbench %s --help)", path, withFlagSuggestion(err, flags), path)}
		}
	}
	requireFlags(c, path)
	if len(c.Subcommands) == 0 {
		return
	}
	if c.Action == nil {
		subs := c.Subcommands
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return unknownCommand(ctx.Args().First(), path, subs)
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	}
	for _, s := range c.Subcommands {
		setUsageHandlers(s, path+" "+s.Name)
	}
}

// requireFlags moves the Required check of c's flags into c.Before (not
// urfave/cli's check, which prints the whole help on stdout before its
// error): a missing one is a usage error naming it. c's flags must be its
// own (newApp builds them per app).
func requireFlags(c *cli.Command, path string) {
	var names []string
	for _, f := range c.Flags {
		if rf, ok := f.(cli.RequiredFlag); !ok || !rf.IsRequired() {
			continue
		}
		sf, ok := f.(*cli.StringFlag)
		if !ok {
			panic(fmt.Sprintf("dmlbench %s: required flag %s is not a string flag", path, f.Names()[0]))
		}
		sf.Required = false
		sf.Usage += " (required)"
		names = append(names, sf.Name)
	}
	if len(names) == 0 || c.Before != nil {
		return
	}
	c.Before = func(ctx *cli.Context) error {
		for _, n := range names {
			if !ctx.IsSet(n) {
				return usagef("%s: --%s is required (see dmlbench %s --help)", path, n, path)
			}
		}
		return nil
	}
}

// flagNotDefined matches urfave/cli's (the flag package's) unknown-flag error.
var flagNotDefined = regexp.MustCompile(`flag provided but not defined: -+(\S+)`)

// withFlagSuggestion adds "did you mean --x?" to an unknown-flag error when
// one of flags (or --help) is close to the name given (edit distance ≤ 2,
// or a prefix of it).
func withFlagSuggestion(err error, flags []cli.Flag) error {
	m := flagNotDefined.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	names := []string{"help"}
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	if best := suggest.NearestCommandLine(m[1], names); best != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, best)
	}
	return err
}

// unknownCommand is the usage error for a command name that does not
// exist, naming the nearest one when it is close (edit distance ≤ 2, or a
// prefix of it).
func unknownCommand(name, path string, cmds []*cli.Command) error {
	primary := map[string]string{}
	var names []string
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			primary[n] = c.Name
			names = append(names, n)
		}
	}
	best := primary[suggest.NearestCommandLine(name, names)]
	see := strings.TrimSpace("dmlbench " + path)
	if best != "" {
		return usagef("unknown command %q; did you mean %q? (see %s --help)", name, best, see)
	}
	return usagef("unknown command %q (see %s --help)", name, see)
}

func main() {
	code := run(os.Args, os.Stdout, os.Stderr)
	// Data written to a file or pipe is only known to be delivered once
	// standard output is closed without error (NFS reports write errors
	// at close).
	if err := os.Stdout.Close(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "dmlbench: closing standard output:", unwrapPathError(err))
		code = 1
	}
	os.Exit(code)
}

// appRunMu lets one app at a time run in a process (tests run apps in
// parallel): urfave/cli writes its package-level help flag (cli.HelpFlag)
// and help subcommand while it sets up and parses any app's command.
var appRunMu sync.Mutex

// run executes the CLI and returns the process exit code: 0 success,
// 1 error (one line on stderr), 2 usage error. A failed write to stdout
// (a full disk, a closed pipe) is an error even when the command itself
// ignored it.
func run(args []string, stdout, stderr io.Writer) int {
	if err := checkKernels(stderr); err != nil {
		fmt.Fprintln(stderr, "dmlbench:", err)
		return 2
	}
	app := newApp()
	out := &procout.Checked{W: stdout}
	app.Writer, app.ErrWriter = out, stderr
	err := func() error {
		appRunMu.Lock()
		defer appRunMu.Unlock()
		return app.Run(args)
	}()
	if err == nil && out.Err != nil {
		err = fmt.Errorf("writing standard output: %v", unwrapPathError(out.Err))
	}
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintln(stderr, "dmlbench:", msg)
	if usage.Is(err) {
		return 2
	}
	return 1
}

// unwrapPathError reduces "write /dev/stdout: no space left on device" to
// its cause.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
