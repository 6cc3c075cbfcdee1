// Package doccheck holds the tests that keep README.md and docs/ true to the
// repository: the README stays short, its commands name targets, packages,
// commands and flags that exist (and the quick ones run, as a newcomer
// would paste them into a fresh clone), and every link of the README and
// docs/ leads to a file and heading that exist. It has no code of its own.
package doccheck
