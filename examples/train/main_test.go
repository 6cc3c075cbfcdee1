package main

import (
	"io"
	"testing"
)

func TestTrainExampleLearnsTheRings(t *testing.T) {
	acc, err := run(io.Discard, 40, 2)
	if err != nil {
		t.Fatal(err)
	}
	if acc < 0.9 {
		t.Errorf("accuracy %.2f after training, want at least 0.9", acc)
	}
}
