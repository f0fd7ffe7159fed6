package main

import (
	"fmt"
	"io"
	"strings"
)

// outputFormat is one --format of report or compare: its name, what it
// writes, and the writer.
type outputFormat[In any] struct {
	name, what string
	write      func(w io.Writer, in In) error
}

// formats is a command's output formats, in the order --help lists them.
type formats[In any] []outputFormat[In]

// get finds a format by name; the error lists the others.
func (fs formats[In]) get(name string) (outputFormat[In], error) {
	for _, f := range fs {
		if f.name == name {
			return f, nil
		}
	}
	return outputFormat[In]{}, fmt.Errorf("--format %q: want %s", name, fs.names(" or "))
}

func (fs formats[In]) names(sep string) string {
	var ns []string
	for _, f := range fs {
		ns = append(ns, f.name)
	}
	return strings.Join(ns, sep)
}

// help is the --format flag's usage: each format with what it writes.
func (fs formats[In]) help() string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, f.name+" ("+f.what+")")
	}
	return "output format: " + strings.Join(parts, ", ")
}
