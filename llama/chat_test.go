package llama

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chatExpectations are testdata/chat_templates.json: conversations,
// templates (names, real models' templates, strings that isolate each of
// llama.cpp's heuristics) and what llama.cpp (cui-llama.rn 1.3.3) makes of
// them, recorded by running its llama_chat_apply_template and
// common_chat_format_single.
type chatExpectations struct {
	Conversations [][]struct{ Role, Content string }
	Templates     []struct{ Name, Template, Source string }
	// Apply: llama_chat_apply_template with the template given.
	Apply []struct {
		Template, Conversation int
		AddAssistant           bool `json:"add_assistant"`
		OK                     bool
		Output                 string
	}
	// Model: llama_chat_apply_template with no template, for a model whose
	// tokenizer.chat_template is Template (-1: none).
	Model []struct {
		Template, Conversation int
		AddAssistant           bool `json:"add_assistant"`
		OK                     bool
		Output                 string
	}
	// Single: common_chat_format_single for each message of Conversation in
	// turn (addAssistant for user messages), with the template Template or,
	// if -1, the model's ModelTemplate (-1: none).
	Single []struct {
		Template      int
		ModelTemplate int `json:"model_template"`
		Conversation  int
		Steps         []string
	}
}

func loadChatExpectations(t *testing.T) *chatExpectations {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "chat_templates.json"))
	require.NoError(t, err)
	var e chatExpectations
	require.NoError(t, json.Unmarshal(b, &e))
	require.NotEmpty(t, e.Apply)
	return &e
}

func (e *chatExpectations) messages(i int) []ChatMessage {
	var ms []ChatMessage
	for _, m := range e.Conversations[i] {
		ms = append(ms, ChatMessage{m.Role, m.Content})
	}
	return ms
}

func (e *chatExpectations) modelWith(i int) *Model {
	v := &Vocab{}
	if i >= 0 {
		v.ChatTemplate = e.Templates[i].Template
	}
	return &Model{Vocab: v}
}

// caseName names a case by its template and conversation.
func (e *chatExpectations) caseName(tmpl, conv int, add bool) string {
	name := "no template"
	if tmpl >= 0 {
		name = e.Templates[tmpl].Name
	}
	return fmt.Sprintf("%s/conversation %d/addAssistant=%v", name, conv, add)
}

func TestApplyChatTemplateMatchesLlamaCpp(t *testing.T) {
	e := loadChatExpectations(t)
	for _, c := range e.Apply {
		got, err := ApplyChatTemplate(e.Templates[c.Template].Template, e.messages(c.Conversation), c.AddAssistant)
		name := e.caseName(c.Template, c.Conversation, c.AddAssistant)
		if !c.OK {
			require.ErrorIs(t, err, ErrChatTemplate, name)
			continue
		}
		require.NoError(t, err, name)
		require.Equal(t, c.Output, got, name)
	}
}

func TestModelApplyChatTemplateMatchesLlamaCpp(t *testing.T) {
	e := loadChatExpectations(t)
	for _, c := range e.Model {
		if c.Template >= 0 && e.Templates[c.Template].Template == "" {
			// an empty tokenizer.chat_template counts as none here (chatml);
			// llama.cpp refuses it, then llama-cli falls back to chatml
			continue
		}
		got, err := e.modelWith(c.Template).ApplyChatTemplate(e.messages(c.Conversation), c.AddAssistant)
		name := e.caseName(c.Template, c.Conversation, c.AddAssistant)
		if !c.OK {
			require.ErrorIs(t, err, ErrChatTemplate, name)
			continue
		}
		require.NoError(t, err, name)
		require.Equal(t, c.Output, got, name)
	}
}

func TestChatAddMatchesLlamaCppFormatSingle(t *testing.T) {
	e := loadChatExpectations(t)
	for _, c := range e.Single {
		tmpl := ""
		if c.Template >= 0 {
			tmpl = e.Templates[c.Template].Template
		}
		name := e.caseName(c.Template, c.Conversation, true)
		if c.Template < 0 {
			name = "model " + e.caseName(c.ModelTemplate, c.Conversation, true)
		}
		chat, err := NewChat(e.modelWith(c.ModelTemplate), tmpl)
		require.NoError(t, err, name)
		msgs := e.messages(c.Conversation)
		for k, m := range msgs {
			got, err := chat.Add(m.Role, m.Content, m.Role == "user")
			require.NoError(t, err, name)
			require.Equal(t, c.Steps[k], got, "%s: message %d", name, k)
		}
		require.Equal(t, msgs, chat.Messages(), name)
	}
}

// The data covers every name, and the real templates of the model families
// the runner is asked about.
func TestChatExpectationsCoverTheTemplates(t *testing.T) {
	e := loadChatExpectations(t)
	covered := map[string]bool{}
	for _, c := range e.Apply {
		if c.OK {
			covered[e.Templates[c.Template].Name] = true
		}
	}
	for _, n := range ChatTemplateNames() {
		require.True(t, covered[n], "name %q", n)
	}
	for _, family := range []string{"Llama-2", "Llama-3", "Phi-3", "gemma", "Mistral", "Qwen2.5", "OpenHermes"} {
		found := false
		for n := range covered {
			found = found || strings.Contains(strings.ToLower(n), strings.ToLower(family))
		}
		require.True(t, found, family)
	}
}

func TestChatTemplateNamesAreLlamaCpps(t *testing.T) {
	require.Equal(t, []string{"chatml", "llama2", "mistral", "phi3", "zephyr", "monarch", "gemma", "gemma2", "orion",
		"openchat", "vicuna", "vicuna-orca", "deepseek", "command-r", "llama3", "chatglm3", "chatglm4", "minicpm",
		"deepseek2", "exaone3", "rwkv-world", "granite"}, ChatTemplateNames())
}

func TestApplyChatTemplateErrorNamesTheTemplate(t *testing.T) {
	_, err := ApplyChatTemplate("llama2-sys", nil, true)
	require.ErrorIs(t, err, ErrChatTemplate)
	require.Contains(t, err.Error(), `"llama2-sys"`)
	require.Contains(t, err.Error(), "chatml, llama2")
	_, err = ApplyChatTemplate(strings.Repeat("{% x %}", 100), nil, true)
	require.Contains(t, err.Error(), "the 700-byte template")
}

func TestNewChatFallsBackToChatMLForAModelTemplateOnly(t *testing.T) {
	m := &Model{Vocab: &Vocab{ChatTemplate: "{{ unknown }}"}}
	_, err := m.ApplyChatTemplate([]ChatMessage{{"user", "hi"}}, true)
	require.ErrorIs(t, err, ErrChatTemplate)
	c, err := NewChat(m, "")
	require.NoError(t, err)
	got, err := c.Add("user", "hi", true)
	require.NoError(t, err)
	require.Equal(t, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", got)

	_, err = NewChat(m, "{{ unknown }}")
	require.True(t, errors.Is(err, ErrChatTemplate))
	_, err = NewChat(nil, "llama3")
	require.NoError(t, err)
	c, err = NewChat(nil, "")
	require.NoError(t, err, "a nil model has no template: chatml")
	require.Equal(t, "", (*Model)(nil).ChatTemplate())
	_ = c
}
