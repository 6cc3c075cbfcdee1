//go:build unix

package gguf

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Create makes files with the permissions os.Create gives: 0666 minus the
// umask (CreateTemp would make them 0600).
func TestCreateModeLikeOSCreate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "m.gguf")
	w, err := Create(path)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
}
