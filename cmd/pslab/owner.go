package main

import (
	"errors"

	"pslab/internal/results"
)

// lockOut takes the lock of an output directory for the rest of this
// process's work in it (results.LockDir): one writer per directory. A
// directory another live pslab holds is bad input (exit 2), naming it.
func lockOut(dir string) (*results.DirLock, error) {
	l, err := results.LockDir(dir)
	var held *results.LockedError
	if errors.As(err, &held) {
		return nil, badInput(err)
	}
	return l, err
}
