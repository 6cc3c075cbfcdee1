package llama

import (
	"errors"
	"fmt"
	"strings"
)

// ChatMessage is one message of a conversation: Role is "system", "user",
// "assistant" or whatever else the template knows; Content is its text.
type ChatMessage struct{ Role, Content string }

// ErrChatTemplate is wrapped by the error of a template that llama.cpp does
// not recognise.
var ErrChatTemplate = errors.New("llama: chat template not supported")

// ApplyChatTemplate formats msgs as a prompt, byte for byte as
// llama_chat_apply_template of llama.cpp (cui-llama.rn 1.3.3) with an
// explicit template. tmpl is either one of ChatTemplateNames or a Jinja
// template as stored in a file's tokenizer.chat_template: it is not
// evaluated but recognised as llama.cpp recognises it, by the strings it
// contains (so a template that llama.cpp would format its own way gives
// llama.cpp's text, not the Jinja's). addAssistant ends the text with the
// start of an assistant message, where the template has one. A template
// llama.cpp does not recognise is an error wrapping ErrChatTemplate.
//
// As through llama.cpp's C API, strings end at their first NUL byte.
func ApplyChatTemplate(tmpl string, msgs []ChatMessage, addAssistant bool) (string, error) {
	return chatTemplate{text: cString(tmpl), byName: true}.apply(msgs, addAssistant)
}

// ChatTemplateNames are the template names llama.cpp 1.3.3 recognises, in
// the order it tries them.
func ChatTemplateNames() []string {
	var names []string
	for _, f := range chatFormats {
		names = append(names, f.names...)
	}
	return names
}

// ChatTemplate returns the model's chat template (the file's
// tokenizer.chat_template), or "" if it has none.
func (m *Model) ChatTemplate() string {
	if m == nil || m.Vocab == nil {
		return ""
	}
	return m.Vocab.ChatTemplate
}

// ApplyChatTemplate formats msgs with the model's own template as llama.cpp
// 1.3.3 does when given none (llama_chat_apply_template with a NULL
// template): chatml if the file has no template (or an empty one, which
// llama.cpp refuses and llama-cli then replaces with chatml); otherwise the first 2047
// bytes of the file's template (the buffer llama.cpp reads it into),
// recognised by the strings it contains only (a file whose template is a
// bare name such as "llama3" is not recognised). An unrecognised template
// is an error wrapping ErrChatTemplate.
func (m *Model) ApplyChatTemplate(msgs []ChatMessage, addAssistant bool) (string, error) {
	return modelChatTemplate(m.ChatTemplate()).apply(msgs, addAssistant)
}

// modelTemplateMax is the length llama.cpp keeps of a file's template: the
// 2048-byte buffer of llama_chat_apply_template, less the NUL.
const modelTemplateMax = 2047

// modelChatTemplate is the template llama.cpp uses for a model whose
// tokenizer.chat_template is text ("" for none).
func modelChatTemplate(text string) chatTemplate {
	if text == "" {
		return chatTemplate{text: "chatml", byName: true}
	}
	text = cString(text)
	if len(text) > modelTemplateMax {
		text = text[:modelTemplateMax]
	}
	return chatTemplate{text: text}
}

// chatTemplate is a template as llama.cpp tests it: its text, and whether
// that text may also be compared whole with the names (it may not for a
// file's template, which llama.cpp reads into a larger zeroed buffer).
type chatTemplate struct {
	text   string
	byName bool
}

// is reports whether the template is the name n.
func (t chatTemplate) is(n string) bool { return t.byName && t.text == n }

// has reports whether the template contains each of subs.
func (t chatTemplate) has(subs ...string) bool {
	for _, s := range subs {
		if !strings.Contains(t.text, s) {
			return false
		}
	}
	return true
}

// format returns the template's chat format, or nil.
func (t chatTemplate) format() *chatFormat {
	for i := range chatFormats {
		f := &chatFormats[i]
		for _, n := range f.names {
			if t.is(n) {
				return f
			}
		}
		if f.detect(t) {
			return f
		}
	}
	return nil
}

func (t chatTemplate) apply(msgs []ChatMessage, addAssistant bool) (string, error) {
	f := t.format()
	if f == nil {
		return "", fmt.Errorf("%w: %s (a template name is one of %s, or a Jinja template llama.cpp recognises)",
			ErrChatTemplate, describeTemplate(t.text), strings.Join(ChatTemplateNames(), ", "))
	}
	var b strings.Builder
	cs := make([]ChatMessage, len(msgs))
	for i, m := range msgs {
		cs[i] = ChatMessage{cString(m.Role), cString(m.Content)}
	}
	f.write(&b, t, cs, addAssistant)
	return b.String(), nil
}

// describeTemplate names a template in an error: quoted if short, else its
// length and start.
func describeTemplate(s string) string {
	if len(s) <= 40 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("the %d-byte template %q...", len(s), s[:32])
}

// cString is s up to its first NUL, as a C string holding s would be.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// trimSpace removes the bytes C's isspace accepts (in the C locale) from
// both ends of s, as llama.cpp's trim does: unlike strings.TrimSpace,
// no Unicode spaces.
func trimSpace(s string) string { return strings.Trim(s, " \t\n\v\f\r") }

// chatFormat is one of the conversation formats of llama.cpp's
// llama_chat_apply_template_internal.
type chatFormat struct {
	names  []string                // names that select it
	detect func(chatTemplate) bool // the strings that select it in a template
	write  func(b *strings.Builder, t chatTemplate, msgs []ChatMessage, addAssistant bool)
}

// chatFormats are llama.cpp 1.3.3's formats in the order it tries them:
// the first whose name or strings match wins, so a template containing the
// strings of two formats gets the earlier one.
var chatFormats = []chatFormat{
	{names: []string{"chatml"}, detect: has("<|im_start|>"), write: writeChatML},
	{names: []string{"llama2", "mistral"}, detect: has("[INST]"), write: writeLlama2},
	{names: []string{"phi3"}, detect: has("<|assistant|>", "<|end|>"), write: roleTagged("<|", "|>\n", "<|end|>\n", "<|assistant|>\n")},
	{names: []string{"zephyr"}, detect: has("<|user|>"), write: roleTagged("<|", "|>\n", "<|endoftext|>\n", "<|assistant|>\n")},
	{names: []string{"monarch"}, detect: has("bos_token + message['role']"), write: writeMonarch},
	{names: []string{"gemma", "gemma2"}, detect: has("<start_of_turn>"), write: writeGemma},
	{names: []string{"orion"}, detect: has(`'\n\nAssistant: ' + eos_token`), write: writeOrion},
	{names: []string{"openchat"}, detect: has("GPT4 Correct "), write: writeOpenChat},
	{names: []string{"vicuna", "vicuna-orca"}, detect: has("USER: ", "ASSISTANT: "), write: writeVicuna},
	{names: []string{"deepseek"}, detect: has("### Instruction:", "<|EOT|>"), write: byRole(byRoleFormat{
		system: [2]string{"", ""}, user: [2]string{"### Instruction:\n", "\n"}, assistant: [2]string{"### Response:\n", "\n<|EOT|>\n"},
		generation: "### Response:\n"})},
	{names: []string{"command-r"}, detect: has("<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"), write: byRole(byRoleFormat{
		system:     [2]string{"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
		user:       [2]string{"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
		assistant:  [2]string{"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
		generation: "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", trim: true})},
	{names: []string{"llama3"}, detect: has("<|start_header_id|>", "<|end_header_id|>"), write: writeLlama3},
	{names: []string{"chatglm3"}, detect: has("[gMASK]sop"), write: writeGLM("[gMASK]sop", "|>\n ")},
	{names: []string{"chatglm4"}, detect: has("[gMASK]<sop>"), write: writeGLM("[gMASK]<sop>", "|>\n")},
	{names: []string{"minicpm"}, detect: has("<用户>"), write: writeMiniCPM},
	{names: []string{"deepseek2"}, detect: has("'Assistant: ' + message['content'] + eos_token"), write: byRole(byRoleFormat{
		system: [2]string{"", "\n\n"}, user: [2]string{"User: ", "\n\n"}, assistant: [2]string{"Assistant: ", "<｜end▁of▁sentence｜>"},
		generation: "Assistant:"})},
	{names: []string{"exaone3"}, detect: has("[|system|]", "[|assistant|]", "[|endofturn|]"), write: byRole(byRoleFormat{
		system: [2]string{"[|system|]", "[|endofturn|]\n"}, user: [2]string{"[|user|]", "\n"}, assistant: [2]string{"[|assistant|]", "[|endofturn|]\n"},
		generation: "[|assistant|]", trim: true})},
	{names: []string{"rwkv-world"}, detect: has("rwkv-world"), write: writeRWKV},
	{names: []string{"granite"}, detect: has("<|start_of_role|>"), write: writeGranite},
}

// has is a detector: the template contains all of subs.
func has(subs ...string) func(chatTemplate) bool {
	return func(t chatTemplate) bool { return t.has(subs...) }
}

func writeChatML(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	if add {
		b.WriteString("<|im_start|>assistant\n")
	}
}

// writeLlama2 writes the [INST] format, with the variants llama.cpp derives
// from the template's text. It never adds a generation prompt.
func writeLlama2(b *strings.Builder, t chatTemplate, msgs []ChatMessage, _ bool) {
	system := t.has("<<SYS>>") || t.is("mistral") // a <<SYS>> block for the system message
	space := ""                                   // around each response
	if t.has("' ' + eos_token") {
		space = " "
	}
	open := "[INST] " // of each turn after the first
	if t.has("bos_token + '[INST]") {
		open = "<s>[INST] "
	}
	strip := t.has("content.strip()")

	b.WriteString("[INST] ")
	inTurn := true
	for _, m := range msgs {
		c := m.Content
		if strip {
			c = trimSpace(c)
		}
		if !inTurn {
			inTurn = true
			b.WriteString(open)
		}
		switch m.Role {
		case "system":
			if system {
				b.WriteString("<<SYS>>\n" + c + "\n<</SYS>>\n\n")
			} else {
				b.WriteString(c + "\n")
			}
		case "user":
			b.WriteString(c + " [/INST]")
		default:
			b.WriteString(space + c + space + "</s>")
			inTurn = false
		}
	}
}

// roleTagged writes every message as open+role+close, its content, end;
// then gen for a generation prompt.
func roleTagged(open, close, end, gen string) func(*strings.Builder, chatTemplate, []ChatMessage, bool) {
	return func(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
		for _, m := range msgs {
			b.WriteString(open + m.Role + close + m.Content + end)
		}
		if add {
			b.WriteString(gen)
		}
	}
}

func writeMonarch(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("<s>")
		}
		b.WriteString(m.Role + "\n" + m.Content + "</s>\n")
	}
	if add {
		b.WriteString("<s>assistant\n")
	}
}

// writeGemma merges a system message (trimmed) into the next user message,
// and calls the assistant "model".
func writeGemma(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
	system := ""
	for _, m := range msgs {
		if m.Role == "system" {
			system = trimSpace(m.Content)
			continue
		}
		role := m.Role
		if role == "assistant" {
			role = "model"
		}
		b.WriteString("<start_of_turn>" + role + "\n")
		if system != "" && role != "model" {
			b.WriteString(system + "\n\n")
			system = ""
		}
		b.WriteString(trimSpace(m.Content) + "<end_of_turn>\n")
	}
	if add {
		b.WriteString("<start_of_turn>model\n")
	}
}

// writeOrion merges a system message into the next user message. It never
// adds a generation prompt (each user message ends with one).
func writeOrion(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, _ bool) {
	system := ""
	for _, m := range msgs {
		switch m.Role {
		case "system":
			system = m.Content
		case "user":
			b.WriteString("Human: ")
			if system != "" {
				b.WriteString(system + "\n\n")
				system = ""
			}
			b.WriteString(m.Content + "\n\nAssistant: </s>")
		default:
			b.WriteString(m.Content + "</s>")
		}
	}
}

func writeOpenChat(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
	for _, m := range msgs {
		if m.Role == "system" {
			b.WriteString(m.Content + "<|end_of_turn|>")
			continue
		}
		role := m.Role
		if role != "" && 'a' <= role[0] && role[0] <= 'z' { // C's toupper on the first byte
			role = string(role[0]-'a'+'A') + role[1:]
		}
		b.WriteString("GPT4 Correct " + role + ": " + m.Content + "<|end_of_turn|>")
	}
	if add {
		b.WriteString("GPT4 Correct Assistant:")
	}
}

func writeVicuna(b *strings.Builder, t chatTemplate, msgs []ChatMessage, add bool) {
	orca := t.is("vicuna-orca") || t.has("SYSTEM: ")
	system := [2]string{"", "\n\n"}
	if orca {
		system = [2]string{"SYSTEM: ", "\n"}
	}
	byRole(byRoleFormat{system: system, user: [2]string{"USER: ", "\n"}, assistant: [2]string{"ASSISTANT: ", "</s>\n"},
		generation: "ASSISTANT:"})(b, t, msgs, add)
}

// byRoleFormat is a format that wraps each system, user and assistant
// message in a prefix and a suffix (other roles are left out).
type byRoleFormat struct {
	system, user, assistant [2]string
	generation              string // the generation prompt
	trim                    bool   // trim the contents
}

func byRole(f byRoleFormat) func(*strings.Builder, chatTemplate, []ChatMessage, bool) {
	return func(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
		for _, m := range msgs {
			var w [2]string
			switch m.Role {
			case "system":
				w = f.system
			case "user":
				w = f.user
			case "assistant":
				w = f.assistant
			default:
				continue
			}
			c := m.Content
			if f.trim {
				c = trimSpace(c)
			}
			b.WriteString(w[0] + c + w[1])
		}
		if add {
			b.WriteString(f.generation)
		}
	}
}

func writeLlama3(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
	for _, m := range msgs {
		b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + trimSpace(m.Content) + "<|eot_id|>")
	}
	if add {
		b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
}

// writeGLM returns the ChatGLM formats: a prefix, then "<|role" + sep +
// content for each message.
func writeGLM(prefix, sep string) func(*strings.Builder, chatTemplate, []ChatMessage, bool) {
	return func(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
		b.WriteString(prefix)
		for _, m := range msgs {
			b.WriteString("<|" + m.Role + sep + m.Content)
		}
		if add {
			b.WriteString("<|assistant|>")
		}
	}
}

// writeMiniCPM never adds a generation prompt (each user message ends with
// one).
func writeMiniCPM(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, _ bool) {
	for _, m := range msgs {
		if m.Role == "user" {
			b.WriteString("<用户>" + trimSpace(m.Content) + "<AI>")
		} else {
			b.WriteString(trimSpace(m.Content))
		}
	}
}

// writeRWKV never adds a generation prompt (each user message ends with
// one).
func writeRWKV(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, _ bool) {
	for _, m := range msgs {
		if m.Role == "user" {
			b.WriteString("User: " + m.Content + "\n\nAssistant:")
		} else {
			b.WriteString(m.Content + "\n\n")
		}
	}
}

func writeGranite(b *strings.Builder, _ chatTemplate, msgs []ChatMessage, add bool) {
	for _, m := range msgs {
		b.WriteString("<|start_of_role|>" + m.Role + "<|end_of_role|>")
		if m.Role == "assistant_tool_call" {
			b.WriteString("<|tool_call|>")
		}
		b.WriteString(m.Content + "<|end_of_text|>\n")
	}
	if add {
		b.WriteString("<|start_of_role|>assistant<|end_of_role|>\n")
	}
}

// Chat formats a conversation a message at a time, as llama.cpp's
// conversation mode does (common_chat_format_single): the text of a new
// message is what the whole conversation formats to past what it formatted
// to without that message, so a session that evaluated the earlier texts
// evaluates only the new one.
type Chat struct {
	tmpl     chatTemplate
	messages []ChatMessage
}

// NewChat starts an empty conversation. With tmpl "" it uses m's template
// as llama.cpp does (Model.ApplyChatTemplate), falling back to chatml where
// llama.cpp does not recognise the file's template; otherwise tmpl is a
// name or template for ApplyChatTemplate (m may then be nil), refused with
// an error wrapping ErrChatTemplate if llama.cpp does not recognise it.
func NewChat(m *Model, tmpl string) (*Chat, error) {
	t := chatTemplate{text: cString(tmpl), byName: true}
	if tmpl == "" {
		t = modelChatTemplate(m.ChatTemplate())
		if t.format() == nil {
			t = chatTemplate{text: "chatml", byName: true}
		}
	}
	if _, err := t.apply(nil, true); err != nil {
		return nil, err
	}
	return &Chat{tmpl: t}, nil
}

// Messages returns the conversation so far.
func (c *Chat) Messages() []ChatMessage { return append([]ChatMessage(nil), c.messages...) }

// Add appends a message to the conversation and returns its text: what to
// evaluate after the texts of the earlier messages. addAssistant (llama.cpp
// sets it for user messages) ends the text with the start of the
// assistant's reply. As llama.cpp does, the text starts with a newline
// when addAssistant is set and the earlier messages' text ends with one
// (the newline the template puts after a reply whose end-of-generation
// token the session evaluated in its place).
func (c *Chat) Add(role, content string, addAssistant bool) (string, error) {
	past := ""
	if len(c.messages) > 0 {
		var err error
		if past, err = c.tmpl.apply(c.messages, false); err != nil {
			return "", err
		}
	}
	msgs := append(c.messages[:len(c.messages):len(c.messages)], ChatMessage{role, content})
	all, err := c.tmpl.apply(msgs, addAssistant)
	if err != nil {
		return "", err
	}
	if len(all) < len(past) {
		return "", fmt.Errorf("llama: chat: the conversation formats shorter with the %s message than without it", role)
	}
	c.messages = msgs
	text := all[len(past):]
	if addAssistant && strings.HasSuffix(past, "\n") {
		text = "\n" + text
	}
	return text, nil
}
