package cell

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Provenance hashes the trainer's files: every element of command that
// names an existing regular file inside workDir (the spec's directory:
// the script, a config file; an interpreter such as /usr/bin/python3 or a
// venv's lies outside and is not hashed), and every path of extra
// (relative to workDir: a file, or a directory such as the trainer's
// package). It maps each path, relative to workDir and with a trailing /
// for a directory, to the hex SHA-256 of the file, or for a directory of
// the sorted list of its files' paths and hashes (hidden entries and
// __pycache__ left out). A path of extra that does not exist is an error.
func Provenance(command []string, workDir string, extra []string) (map[string]string, error) {
	out := map[string]string{}
	root, err := filepath.Abs(workDir)
	if err != nil {
		return nil, err
	}
	inside := func(a string) (string, string, bool) {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		p = filepath.Clean(p)
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", "", false
		}
		return p, filepath.ToSlash(rel), true
	}
	for _, a := range command {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		p, rel, ok := inside(a)
		if !ok || !fileExists(p) {
			continue
		}
		h, err := hashFile(p)
		if err != nil {
			return nil, err
		}
		out[rel] = h
	}
	for _, a := range extra {
		p, rel, ok := inside(a)
		if !ok {
			return nil, fmt.Errorf("files: %s is not inside the spec's directory %s", a, root)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("files: %s: no such file or directory (paths are relative to the spec's directory)", a)
		}
		if !st.IsDir() {
			if out[rel], err = hashFile(p); err != nil {
				return nil, err
			}
			continue
		}
		if out[rel+"/"], err = hashDir(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashDir(dir string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, ".") || name == "__pycache__") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		h, err := hashFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, filepath.ToSlash(rel)+"\t"+h)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:]), nil
}

// CheckFiles compares the hashes a cell was planned with (want; none: no
// check) with the files' now: a file that changed, appeared or went is an
// error naming it.
func CheckFiles(want, got map[string]string) error {
	if want == nil {
		return nil
	}
	var changed []string
	for k, v := range want {
		if got[k] != v {
			changed = append(changed, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	sort.Strings(changed)
	return fmt.Errorf("%s changed since this cell was planned: its results would mix two versions of the trainer; restore it, or run the spec with a new --out", strings.Join(changed, ", "))
}

// GitState is the commit of a git work tree and whether its tracked
// files differ from it.
type GitState struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// GitStateOf is the git state of the work tree holding dir, or nil when
// dir is in none (or git is not installed).
func GitStateOf(dir string) *GitState {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	out, err := exec.Command(git, "-C", dir, "rev-parse", "--verify", "-q", "HEAD").Output()
	if err != nil {
		return nil
	}
	st := &GitState{Commit: strings.TrimSpace(string(out))}
	diff, err := exec.Command(git, "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	st.Dirty = err != nil || len(strings.TrimSpace(string(diff))) > 0
	return st
}
