package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion is `tako version` and `tako --version`: the module's version
// as the build recorded it (a tag for `go install ...@v1.2.3`, a pseudo
// version with the commit for a build in a checkout), the commit when the
// version does not carry it, and the Go release.
func runVersion(args []string, stdout io.Writer) error {
	for _, a := range args {
		switch a {
		case "-h", "--help", "-help":
			_, err := io.WriteString(stdout, commandHelp("version"))
			return err
		case "--version", "-version":
		default:
			return usagef("version takes no arguments, got %q", a)
		}
	}
	_, err := fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
	return err
}

// versionLine is the one line of tako version.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	version, commit, modified := "(unknown)", "", false
	if ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	line := "tako " + version
	if commit != "" && (version == "(devel)" || version == "(unknown)") {
		line += " commit " + commit[:min(len(commit), 12)]
		if modified {
			line += " (modified)"
		}
	}
	return fmt.Sprintf("%s (%s %s/%s)", line, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
