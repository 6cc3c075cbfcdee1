package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBenchRawPairsTheLibrariesOfARow(t *testing.T) {
	out := "3 rounds, 1 thread(s); per library: median [quartiles]; A = new.so; B = old.so\n" +
		"raw\tmul_mat q4_0 K=768 M=4096 N=1\t0\t10 11 12\n" +
		"raw\tmul_mat q4_0 K=768 M=4096 N=1\t1\t9 9.5 10\n" +
		"mul_mat q4_0 K=768 M=4096 N=1          11.00 [10.00-12.00]  9.50 [9.00-10.00] GFLOPS  A/B 1.16\n" +
		"raw\tmul_mat q4_0 K=768 M=1024 N=64\t0\t100 101 102\n" +
		"raw\tmul_mat q4_0 K=768 M=1024 N=64\t1\t90 91 92\n"
	rows, err := parseBenchRaw(out)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, kernelRow{"mul_mat q4_0 K=768 M=4096 N=1", []float64{10, 11, 12}, []float64{9, 9.5, 10}}, rows[0])
	assert.Equal(t, "mul_mat q4_0 K=768 M=1024 N=64", rows[1].name)
	assert.Equal(t, []float64{90, 91, 92}, rows[1].old)
}

func TestParseBenchRawRefusesBadLines(t *testing.T) {
	for _, out := range []string{
		"raw\tmul_mat q4_0\t0\n",
		"raw\tmul_mat q4_0\t0\t1 x 3\n",
		"raw\tmul_mat q4_0\t2\t1 2 3\n",
	} {
		_, err := parseBenchRaw(out)
		assert.Error(t, err, out)
	}
}
