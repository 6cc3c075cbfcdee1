package llama_test

import (
	"fmt"

	"github.com/ggml-go/ggml/llama"
)

// A conversation formatted as a prompt by a template name (a file's own
// Jinja template, m.ChatTemplate(), works the same way: llama.cpp
// recognises it by the strings it contains).
func ExampleApplyChatTemplate() {
	msgs := []llama.ChatMessage{
		{Role: "system", Content: "You are a helpful assistant"},
		{Role: "user", Content: "Hello"},
		{Role: "assistant", Content: "Hi there"},
		{Role: "user", Content: "How are you?"},
	}
	prompt, err := llama.ApplyChatTemplate("llama3", msgs, true)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", prompt)
	// Output:
	// "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHow are you?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
}

// A chat a message at a time, as llama.cpp's conversation mode runs it:
// each user message's text is what to evaluate after what the session
// already holds (tokenize it with special tokens parsed,
// m.Vocab.Tokenize(text, false, true), put the previous reply's last token
// first: Generate samples it but does not evaluate it; then Generate the
// reply). The assistant's text is not evaluated: the session holds the
// reply's tokens. The texts are llama.cpp's, with its newline before a user
// message that follows one (after a reply it stands after the
// end-of-generation token that replaced "<|im_end|>").
func ExampleChat() {
	chat, err := llama.NewChat(nil, "chatml") // nil model: the template is given
	if err != nil {
		panic(err)
	}
	for _, m := range []llama.ChatMessage{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Hello"},
		{Role: "assistant", Content: "Hi"}, // the generated reply
		{Role: "user", Content: "Bye"},
	} {
		text, err := chat.Add(m.Role, m.Content, m.Role == "user")
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-9s %q\n", m.Role, text)
	}
	// Output:
	// system    "<|im_start|>system\nBe brief.<|im_end|>\n"
	// user      "\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
	// assistant "<|im_start|>assistant\nHi<|im_end|>\n"
	// user      "\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"
}
