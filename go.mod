module github.com/ggml-go/ggml

go 1.26
