package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"pslab/internal/results"
)

// output is a file or directory a command will write, named by its flag.
type output struct {
	flag, path string
	dir        bool
}

// checkOutputs checks, before anything is read or written, that every
// output can be written: a file path that is not a directory and whose
// directory this process may write into (or create), a directory path
// that is one, or can be made. Every problem is returned at once.
func checkOutputs(outs ...output) []error {
	var errs []error
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := checkWritable(o); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", o.flag, o.path, err))
		}
	}
	return errs
}

func checkWritable(o output) error {
	st, err := os.Stat(o.path)
	switch {
	case err == nil && o.dir && !st.IsDir():
		return errors.New("exists and is not a directory")
	case err == nil && !o.dir && st.IsDir():
		return errors.New("is a directory: give a file name")
	case err == nil && o.dir:
		return writableDir(o.path)
	case err == nil && !st.Mode().IsRegular(): // a device or a pipe: written in place
		if err := unix.Access(o.path, unix.W_OK); err != nil {
			return fmt.Errorf("not writable: %v", err)
		}
		return nil
	case err == nil:
		return writableDir(filepath.Dir(o.path)) // replaced by a rename in its directory
	case !os.IsNotExist(err):
		return err
	}
	// Not there yet: the nearest existing parent must be a directory we
	// may write into (the rest is made).
	p := filepath.Dir(filepath.Clean(o.path))
	for {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("%s is not a directory", p)
			}
			return writableDir(p)
		}
		if !os.IsNotExist(err) {
			return err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

func writableDir(dir string) error {
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("%s is not writable: %v", dir, err)
	}
	return nil
}

// writeOutput writes a command's output to standard output, or, with
// --out, atomically to a file (nothing is written when write fails; a
// file that cannot be written is bad input).
func writeOutput(cmd *cobra.Command, out, command, what string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	var w io.Writer = cmd.OutOrStdout()
	if out != "" {
		w = &buf
	}
	if err := write(w); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	if err := writeFile(out, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s -> %s\n", command, what, out)
	return nil
}

// writeFile makes the file's directory and writes it atomically, or, when
// the path is a device or a pipe (/dev/stdout, /dev/null, a FIFO), into
// it: such a file is never replaced. A failure is bad input (exit 2: the
// output path cannot be used).
func writeFile(path string, data []byte) error {
	if st, err := os.Stat(path); err == nil && !st.IsDir() && !st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return badInput(fmt.Errorf("write %s: %w", path, err))
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return badInput(fmt.Errorf("write %s: %w", path, err))
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return badInput(fmt.Errorf("write %s: %w", path, err))
	}
	if err := results.WriteAtomic(path, data); err != nil {
		return badInput(fmt.Errorf("write %s: %w", path, err))
	}
	return nil
}
