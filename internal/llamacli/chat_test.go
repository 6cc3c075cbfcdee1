package llamacli

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/internal/shareddata"
	"github.com/ggml-go/ggml/llama"
)

// llama2Template is meta-llama/Llama-2-7b-chat-hf's tokenizer.chat_template.
const llama2Template = `{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}`

// chatModel saves a small random model with Llama 2's real vocabulary
// (from the shared data; the test is skipped without it) and chat template.
func chatModel(t *testing.T) (string, *llama.Model) {
	t.Helper()
	f, err := gguf.Open(shareddata.Dir(t, "vocab", "ggml-vocab-llama-spm.gguf"))
	require.NoError(t, err)
	defer f.Close()
	v, err := llama.LoadVocab(f)
	require.NoError(t, err)
	v.ChatTemplate = llama2Template
	m, err := llama.NewModel(llama.Hparams{NEmbd: 32, NLayer: 1, NHead: 2, NFF: 64, NCtxTrain: 256}, v, llama.ModelOptions{Seed: 1, Std: 0.2})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, m.Save(path, "chat-test"))
	m.Close()
	m, err = llama.Load(path, llama.LoadOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	require.Equal(t, llama2Template, m.ChatTemplate(), "the template survives Save and Load")
	return path, m
}

func converse(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = RunWithInput("llama", append([]string{"-cnv", "-t", "1", "--temp", "0", "--no-warmup"}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

// Each turn evaluates only the new part of the formatted conversation (the
// KV cache keeps the rest): the prompt tokens of the whole conversation are
// the system message's, then for each user message its text's and the one
// token of the previous reply that generation sampled but did not evaluate.
func TestConversationEvaluatesOnlyTheNewText(t *testing.T) {
	path, m := chatModel(t)
	stdout, stderr, err := converse(t, "Hello\n\nHow are you?\n", "-m", path, "-sys", "Be brief.", "-n", "3")
	require.NoError(t, err, stderr)

	chat, err := llama.NewChat(m, "")
	require.NoError(t, err)
	sys, err := chat.Add("system", "Be brief.", false)
	require.NoError(t, err)
	require.Equal(t, "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\n", sys)
	u1, err := chat.Add("user", "Hello", true)
	require.NoError(t, err)
	_, err = chat.Add("assistant", "any reply", false)
	require.NoError(t, err)
	u2, err := chat.Add("user", "How are you?", true)
	require.NoError(t, err)
	require.Equal(t, "<s>[INST] How are you? [/INST]", u2)
	want := len(m.Vocab.Tokenize(sys, true, true)) + len(m.Vocab.Tokenize(u1, false, true)) + 1 + len(m.Vocab.Tokenize(u2, false, true))

	require.Contains(t, stderr, "conversation: 2 turns; prompts "+strconv.Itoa(want)+" tokens")
	require.Contains(t, stderr, "replies 6 tokens")
	require.True(t, strings.HasPrefix(stdout, "\n> "), stdout)
	require.Equal(t, 4, strings.Count(stdout, "\n> "), "a prompt for each line and one at EOF (the empty line is skipped): %q", stdout)
	require.True(t, strings.HasSuffix(stdout, "\n> \n"), stdout)

	// with a template given by name, or the model's given whole (the same
	// replies, greedy)
	_, stderr2, err := converse(t, "Hello\nHow are you?\n", "-m", path, "--system-prompt", "Be brief.", "-n", "3", "--chat-template", "llama2")
	require.NoError(t, err)
	require.Contains(t, stderr2, "conversation: 2 turns")
	stdout3, _, err := converse(t, "Hello\nHow are you?\n", "-m", path, "-sys", "Be brief.", "-n", "3", "--chat-template", llama2Template)
	require.NoError(t, err)
	require.Equal(t, strings.Replace(stdout, "\n> \n> ", "\n> ", 1), stdout3, "the skipped empty line aside")
}

func TestConversationStopsWhenTheContextIsFull(t *testing.T) {
	path, _ := chatModel(t)
	_, stderr, err := converse(t, strings.Repeat("Tell me a long story about a fox.\n", 20), "-m", path, "-n", "8", "-c", "64")
	require.NoError(t, err)
	require.Contains(t, stderr, "the context is full")
}

func TestConversationWithoutATemplateUsesChatML(t *testing.T) {
	path := testModel(t, 128)
	stdout, stderr, err := converse(t, "the lazy dog\n", "-m", path, "-n", "2")
	require.NoError(t, err, stderr)
	require.Contains(t, stderr, "warning: the model has no chat template: using chatml")
	require.Contains(t, stderr, "conversation: 1 turns")
	require.Equal(t, 2, strings.Count(stdout, "\n> "))
}

func TestConversationFlagErrors(t *testing.T) {
	path := testModel(t, 64)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-sys", "x"}, "add -cnv"},
		{[]string{"--chat-template", "chatml"}, "add -cnv"},
		{[]string{"-cnv", "--chat-template", "llama2-sys"}, `--chat-template: llama: chat template not supported: "llama2-sys"`},
		{[]string{"-cnv", "-ids", "1,2"}, "-ids cannot be combined with -cnv"},
		{[]string{"-cnv", "-p", "a", "-sys", "b"}, "not both"},
		{[]string{"--conversation", "-r", "2"}, "cannot be combined with -cnv"},
		{[]string{"-cnv", "-n", "0"}, "-n 0"},
	} {
		var out, errb bytes.Buffer
		err := RunWithInput("llama", append([]string{"-m", path}, c.args...), strings.NewReader(""), &out, &errb)
		require.True(t, errors.Is(err, cli.ErrUsage), "%v: %v", c.args, err)
		require.Contains(t, err.Error(), c.want, c.args)
		require.NotContains(t, err.Error(), "\n")
	}
}
