package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// addDeprecatedAlias registers old as another name of the flag name: it
// sets the same value and says, when used, to use --name instead.
func addDeprecatedAlias(fs *pflag.FlagSet, old, name string) {
	f := fs.Lookup(name)
	fs.Var(f.Value, old, f.Usage)
	_ = fs.MarkDeprecated(old, fmt.Sprintf("use --%s", name))
}
