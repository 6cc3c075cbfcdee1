package doccheck

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
)

// root is the repository's top folder, from this package's folder.
const root = "../.."

// maxReadmeLines is the README's length limit: a guide read top to bottom;
// the depth is in docs/.
const maxReadmeLines = 350

// docFiles are the Markdown files the tests read: the README and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeIsAtMost350Lines(t *testing.T) {
	n := strings.Count(readFile(t, filepath.Join(root, "README.md")), "\n")
	if n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the depth to docs/", n, maxReadmeLines)
	}
}

// shellCommands returns the commands of a Markdown text's ```sh blocks, one
// per line (backslash continuations joined, comments and blank lines left
// out).
func shellCommands(text string) []string {
	var cmds []string
	in := false
	pending := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			in = !in && trimmed == "```sh"
			continue
		}
		if !in || trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if c := regexp.MustCompile(`\s+#\s.*$`).FindStringIndex(trimmed); c != nil {
			trimmed = strings.TrimSpace(trimmed[:c[0]])
		}
		if strings.HasSuffix(trimmed, `\`) {
			pending += strings.TrimSuffix(trimmed, `\`) + " "
			continue
		}
		cmds = append(cmds, pending+trimmed)
		pending = ""
	}
	return cmds
}

// words splits a command line as a shell would for our purposes: blanks
// separate words, quotes group them (and are removed).
func words(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	have := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, have = r, true
		case r == ' ' || r == '\t':
			if have || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteRune(r)
		}
	}
	if have || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// pipeline splits a command line at its pipes; the last stage is the
// command the README is about (the others feed it, e.g. echo).
func pipeline(cmd string) []string {
	var stages []string
	for _, s := range strings.Split(cmd, " | ") {
		stages = append(stages, strings.TrimSpace(s))
	}
	return stages
}

// buildTargets are the targets of build.sh's case statement.
func buildTargets(t *testing.T) map[string]bool {
	t.Helper()
	targets := map[string]bool{}
	re := regexp.MustCompile(`^  ([a-z0-9|-]+)\)$`)
	for _, line := range strings.Split(readFile(t, filepath.Join(root, "build.sh")), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			// a label's other names (help|-h|--help) are its aliases
			name, _, _ := strings.Cut(m[1], "|")
			targets[name] = true
		}
	}
	if len(targets) == 0 {
		t.Fatal("build.sh: no targets found in its case statement")
	}
	return targets
}

// goSources is the text of the non-test Go files of the given folders
// (relative to the root), where a command's flags and names are defined.
func goSources(t *testing.T, dirs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(root, d, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				b.WriteString(readFile(t, f))
			}
		}
	}
	return b.String()
}

// ggmlCommands are the commands of cmd/ggml (the keys of its table).
func ggmlCommands(t *testing.T) map[string]bool {
	t.Helper()
	cmds := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+"([a-z-]+)":\s+\{`).FindAllStringSubmatch(goSources(t, "cmd/ggml"), -1) {
		cmds[m[1]] = true
	}
	if !cmds["run"] || !cmds["demo"] {
		t.Fatalf("cmd/ggml: the command table was not found (got %v)", cmds)
	}
	return cmds
}

// checkFlags reports the flags of args (words starting with - that are not
// negative numbers) that the sources do not define as "name".
func checkFlags(t *testing.T, where, cmd string, args []string, src string) {
	t.Helper()
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || regexp.MustCompile(`^-[0-9.]+$`).MatchString(a) {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.Contains(src, `"`+name+`"`) {
			t.Errorf("%s: %q: flag %s is not defined by the command", where, cmd, a)
		}
	}
}

// mainPackage reports whether dir (relative to the root) holds a main package.
func mainPackage(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && regexp.MustCompile(`(?m)^package main$`).Match(b) {
			return true
		}
	}
	return false
}

// checkGgml checks a command line of the ggml tool: its command exists, and
// so do its flags.
func checkGgml(t *testing.T, where, cmd string, args []string, commands map[string]bool) {
	t.Helper()
	if len(args) == 0 || !commands[args[0]] {
		t.Errorf("%s: %q: not a command of cmd/ggml", where, cmd)
		return
	}
	rest := args[1:]
	if args[0] == "gguf" {
		if len(rest) == 0 || (rest[0] != "inspect" && rest[0] != "dump") {
			t.Errorf("%s: %q: gguf takes inspect or dump", where, cmd)
			return
		}
		rest = rest[1:]
	}
	checkFlags(t, where, cmd, rest, goSources(t, "cmd/ggml", "internal/llamacli"))
}

// checkCommand checks one command line against the repository: the
// programs, targets, packages, folders and flags it names exist.
func checkCommand(t *testing.T, where, cmd string, targets, commands map[string]bool) {
	t.Helper()
	for _, stage := range pipeline(cmd) {
		w := words(stage)
		if len(w) == 0 {
			continue
		}
		switch {
		case w[0] == "echo":
		case w[0] == "./build.sh":
			if len(w) < 2 || !targets[w[1]] {
				t.Errorf("%s: %q: not a build.sh target", where, cmd)
			}
		case w[0] == "ggml":
			checkGgml(t, where, cmd, w[1:], commands)
		case len(w) >= 3 && w[0] == "go" && w[1] == "run":
			pkg := strings.TrimPrefix(w[2], "./")
			if !strings.HasPrefix(w[2], "./") || !mainPackage(pkg) {
				t.Errorf("%s: %q: %s is not a main package of the repository", where, cmd, w[2])
				continue
			}
			if pkg == "cmd/ggml" {
				checkGgml(t, where, cmd, w[3:], commands)
			} else {
				checkFlags(t, where, cmd, w[3:], goSources(t, pkg))
			}
		case len(w) >= 2 && w[0] == "go" && w[1] == "test":
			for _, a := range w[2:] {
				if strings.HasPrefix(a, "./") {
					if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(a, "/..."))); err != nil {
						t.Errorf("%s: %q: no package %s", where, cmd, a)
					}
				}
			}
		case w[0] == "cc":
			for i, a := range w {
				dir := ""
				if strings.HasPrefix(a, "-I") {
					dir = strings.TrimPrefix(a, "-I")
				} else if a == "$(find" && i+1 < len(w) {
					dir = w[i+1]
				}
				if st, err := os.Stat(filepath.Join(root, dir)); dir != "" && (err != nil || !st.IsDir()) {
					t.Errorf("%s: %q: no folder %s", where, cmd, dir)
				}
			}
		case w[0] == "git" && len(w) > 1 && w[1] == "clone",
			w[0] == "go" && len(w) > 1 && (w[1] == "mod" || w[1] == "work" || w[1] == "get"):
			// run in the user's module, not in the clone: ./build.sh goget
			// checks the replace way on every CI run
		default:
			t.Errorf("%s: %q: this test does not know the program %q; teach it", where, cmd, w[0])
		}
	}
}

// The README's and docs' shell commands name build.sh targets, main
// packages, ggml commands and flags, and folders that exist.
func TestReadmeCommandsNameWhatExists(t *testing.T) {
	targets, commands := buildTargets(t), ggmlCommands(t)
	n := 0
	for _, f := range docFiles(t) {
		where := strings.TrimPrefix(f, root+"/")
		for _, cmd := range shellCommands(readFile(t, f)) {
			checkCommand(t, where, cmd, targets, commands)
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d shell commands found: are the ```sh blocks still there?", n)
	}
}

// placeholder matches what a reader replaces before running a command: a
// file named in capitals (MODEL.gguf), an address of another machine.
var placeholder = regexp.MustCompile(`\b[A-Z][A-Z0-9_-]{2,}\.[a-z]+\b|URL-OF|\b10\.\d+\.\d+\.\d+`)

// runnable reports whether a README command is one this test runs for
// real, and why not otherwise.
func runnable(cmd string) (bool, string) {
	last := pipeline(cmd)
	w := words(last[len(last)-1])
	switch {
	case placeholder.MatchString(cmd):
		return false, "names a file or machine the reader supplies"
	case w[0] == "./build.sh":
		return false, "a build.sh target: CI runs them"
	case w[0] == "cc":
		return false, "needs the reader's app.c (./build.sh cwarn links a program the same way)"
	case w[0] == "git" || (w[0] == "go" && w[1] != "run"):
		return false, "run in the reader's module (./build.sh goget checks it)"
	}
	for _, a := range w {
		if a == "rpc-server" {
			return false, "serves until stopped (./build.sh rpcsplit runs it)"
		}
	}
	return true, ""
}

// The README's quick commands work when pasted into a fresh clone, in the
// order the README gives them (a later one uses the files of an earlier
// one): `go run ./X` is run as the built program, in a scratch folder.
func TestReadmeCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds cmd/ggml and the examples the README runs, and runs them")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the README's programs")
	}
	bin, work := t.TempDir(), t.TempDir()
	built := map[string]string{}
	build := func(pkg string) string {
		if p, ok := built[pkg]; ok {
			return p
		}
		out := filepath.Join(bin, filepath.Base(pkg))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, goBin, "build", "-o", out, "./"+pkg)
		c.Dir = root
		if b, err := c.CombinedOutput(); err != nil {
			t.Fatalf("go build ./%s: %v\n%s", pkg, err, b)
		}
		built[pkg] = out
		return out
	}
	goRun := regexp.MustCompile(`\bgo run \./([\w/-]+)`)
	ran := 0
	for _, cmd := range shellCommands(readFile(t, filepath.Join(root, "README.md"))) {
		if ok, why := runnable(cmd); !ok {
			t.Logf("not run: %s (%s)", cmd, why)
			continue
		}
		line := goRun.ReplaceAllStringFunc(cmd, func(m string) string {
			return build(goRun.FindStringSubmatch(m)[1])
		})
		if strings.HasPrefix(line, "ggml ") {
			line = build("cmd/ggml") + line[len("ggml"):]
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		c := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", line)
		c.Dir = work
		out, err := c.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, tail(out, 20))
			continue
		}
		ran++
	}
	if ran < 5 {
		t.Errorf("only %d README commands ran: the tour's commands should run in a fresh clone", ran)
	}
}

// tail is the last n lines of out.
func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// slug is the anchor GitHub gives a heading: lower case, letters, digits,
// spaces as hyphens, hyphens and underscores kept, the rest dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown file (a repeated heading
// gets -1, -2, ... as on GitHub).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if in || !strings.HasPrefix(line, "#") {
			continue
		}
		s := slug(strings.TrimSpace(strings.TrimLeft(line, "#")))
		if k := seen[s]; k > 0 {
			out[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// Every link of the README and docs/ to a file of the repository leads to
// a file that exists, and to a heading of it where it names one.
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, f := range docFiles(t) {
		where := strings.TrimPrefix(f, root+"/")
		for _, m := range link.FindAllStringSubmatch(readFile(t, f), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
			}
			st, err := os.Stat(file)
			if err != nil {
				t.Errorf("%s: link %s: no file %s", where, target, path)
				continue
			}
			if anchor == "" {
				continue
			}
			if st.IsDir() || !strings.HasSuffix(file, ".md") {
				t.Errorf("%s: link %s: an anchor into a file that is not Markdown", where, target)
				continue
			}
			if !anchors(readFile(t, file))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", where, target, path, anchor)
			}
		}
	}
}

// Paths of the repository named in the README and docs/ (`csrc/include/`,
// `tests/c/bench-ab.c`) exist (models/ is the reader's own folder); what a clone lacks (../shared) is named with
// where it comes from, the project's shared data folder.
func TestDocsPathsExist(t *testing.T) {
	code := regexp.MustCompile("`([^`\\s]+)`")
	pathLike := regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]*)+$`)
	for _, f := range docFiles(t) {
		where := strings.TrimPrefix(f, root+"/")
		text := readFile(t, f)
		if strings.Contains(text, "../shared") && !strings.Contains(text, "shared data folder") {
			t.Errorf("%s: names ../shared without saying what it is (the project's shared data folder, beside the checkout)", where)
		}
		missing := map[string]bool{}
		for _, m := range code.FindAllStringSubmatch(text, -1) {
			p := m[1]
			if !pathLike.MatchString(p) || strings.HasPrefix(p, "models/") || strings.Contains(p, "//") {
				continue
			}
			// a path of the repository starts at one of its top-level
			// entries (not log/slog, linux/amd64, ../shared, or a layer
			// folder named relative to csrc/)
			first, rest, _ := strings.Cut(p, "/")
			if rest == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, first)); err != nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(p, "/..."))); err != nil {
				missing[p] = true
			}
		}
		var list []string
		for p := range missing {
			list = append(list, p)
		}
		sort.Strings(list)
		for _, p := range list {
			t.Errorf("%s: names `%s`, which the repository does not have", where, p)
		}
	}
}

// docs/development.md lists every build.sh target (the script's header
// lists them too).
func TestDocsListEveryBuildTarget(t *testing.T) {
	text := readFile(t, filepath.Join(root, "docs", "development.md"))
	var missing []string
	for target := range buildTargets(t) {
		if !regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(target) + "[ `]").MatchString(text) {
			missing = append(missing, target)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/development.md's build.sh table lacks %v", missing)
	}
}
