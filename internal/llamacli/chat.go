package llamacli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ggml-go/ggml/internal/cli"
	"github.com/ggml-go/ggml/llama"
)

// chatConfig holds the conversation mode's flags.
type chatConfig struct {
	on       bool   // -cnv, --conversation
	system   string // -sys, --system-prompt
	template string // --chat-template
	chat     *llama.Chat
}

func (cc *chatConfig) define(fs *flag.FlagSet) {
	fs.BoolVar(&cc.on, "conversation", false, "conversation mode (as llama-cli's): each line of stdin is a user message, formatted with the model's chat template, and the reply is printed after it; the KV cache keeps the conversation; EOF ends")
	cli.Alias(fs, "conversation", "cnv")
	fs.StringVar(&cc.system, "system-prompt", "", "conversation mode: the system message (-p given alone is taken as one, as llama-cli did)")
	cli.Alias(fs, "system-prompt", "sys")
	fs.StringVar(&cc.template, "chat-template", "", "conversation mode: the chat template, a name ("+strings.Join(llama.ChatTemplateNames(), ", ")+") or a Jinja template llama.cpp recognises, instead of the model's")
}

// checks are the conversation mode's problems for validate.
func (cc *chatConfig) checks(c *config) []struct {
	bad bool
	msg string
} {
	sysSet := c.gave("sys", "system-prompt")
	chatFlags := sysSet || c.given["chat-template"]
	_, tmplErr := llama.ApplyChatTemplate(cc.template, nil, true)
	return []struct {
		bad bool
		msg string
	}{
		{chatFlags && !cc.on, "-sys and --chat-template are for conversation mode: add -cnv"},
		{cc.on && c.ids != "", "-ids cannot be combined with -cnv: the messages are read from stdin"},
		{cc.on && c.gave("p", "prompt") && sysSet, "-cnv takes the system message from -sys or -p, not both"},
		{cc.on && (c.reps > 1 || c.ceiling > 0 || c.ceilingPairs > 0), "-r, -ceiling and -ceiling-pairs cannot be combined with -cnv"},
		{cc.on && c.n == 0, "-n 0 generates no reply: give -n -1 or a count with -cnv"},
		{cc.template != "" && tmplErr != nil, fmt.Sprintf("--chat-template: %v", tmplErr)},
	}
}

// start sets up the conversation for m and returns the tokens to evaluate
// before the first message: the system message's text, or a BOS token
// where the vocabulary starts texts with one.
func (cc *chatConfig) start(m *llama.Model, c *config, stderr io.Writer) ([]int32, error) {
	if m.Vocab.Model == llama.TokenizerNone {
		return nil, errors.New("-cnv: the model has no tokenizer")
	}
	if cc.template == "" {
		what := ""
		if m.ChatTemplate() == "" {
			what = "has no chat template"
		} else if _, err := m.ApplyChatTemplate(nil, true); err != nil {
			what = "has a chat template llama.cpp does not recognise"
		}
		if what != "" {
			fmt.Fprintf(stderr, "warning: the model %s: using chatml (--chat-template sets one)\n", what)
		}
	}
	var err error
	if cc.chat, err = llama.NewChat(m, cc.template); err != nil {
		return nil, err
	}
	system := cc.system
	if system == "" && c.gave("p", "prompt") {
		system = c.prompt
	}
	if system == "" {
		if m.Vocab.AddBOS && m.Vocab.BOS >= 0 {
			return []int32{m.Vocab.BOS}, nil
		}
		return nil, nil
	}
	text, err := cc.chat.Add("system", system, false)
	if err != nil {
		return nil, err
	}
	return m.Vocab.Tokenize(text, true, true), nil
}

// converse runs the conversation: for each line of stdin, the new part of
// the formatted conversation is evaluated after what the session holds
// (pending first: the system message, or the last reply's final token,
// which generation samples but does not evaluate) and the reply is
// streamed to out, until EOF, an error or a full context.
func (c *config) converse(ctx context.Context, s *llama.Session, pending []int32, stdin io.Reader, out *textWriter, stderr io.Writer) error {
	m := s.Model()
	v := m.Vocab
	in := bufio.NewReader(stdin)
	smp := c.samplerOptions(stderr)
	n := c.n
	if !c.gave("n", "n-predict") {
		n = -1 // llama-cli's default: each reply runs to its end
	}
	var total llama.Stats
	turns := 0
	defer func() {
		fmt.Fprintf(stderr, "conversation: %d turns; prompts %d tokens in %.2f ms = %.2f tokens/s; replies %d tokens in %.2f ms = %.2f tokens/s (%d threads)\n",
			turns, total.PromptTokens, ms(total.PromptTime), total.PromptTokensPerSecond(),
			len(total.Tokens), ms(total.GenTime), total.GenTokensPerSecond(), s.Threads())
	}()
	for {
		out.WriteString("\n> ")
		if err := out.Flush(); err != nil {
			return err
		}
		line, err := in.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if line == "" && err != nil { // EOF
			out.WriteString("\n")
			return nil
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			continue
		}
		text, err := c.chat.chat.Add("user", line, true)
		if err != nil {
			return err
		}
		toks := append(pending, v.Tokenize(text, false, true)...)
		if s.Pos()+len(toks) >= s.ContextSize() {
			fmt.Fprintf(stderr, "the context is full: %d of %d positions used, the message needs %d more (-c sets its size)\n",
				s.Pos(), s.ContextSize(), len(toks))
			return nil
		}
		var reply strings.Builder
		opts := llama.GenerateOptions{MaxTokens: max(n, 0), Sampler: smp, OnToken: func(id int32) error {
			if v.IsEOG(id) {
				return nil
			}
			p := v.Piece(id, false)
			reply.WriteString(p)
			out.WriteString(p)
			return out.Flush()
		}}
		smp.Seed++ // another random stream for each reply
		st, err := s.Generate(ctx, toks, opts)
		turns++
		total.PromptTokens += st.PromptTokens
		total.PromptTime += st.PromptTime
		total.Tokens = append(total.Tokens, st.Tokens...)
		total.GenEvals += st.GenEvals
		total.GenTime += st.GenTime
		if errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := c.chat.chat.Add("assistant", reply.String(), false); err != nil {
			return err
		}
		// the last token is sampled but not evaluated: it goes first next
		// time (an end-of-generation token too, as llama-cli evaluates it)
		pending = nil
		if k := len(st.Tokens); k > 0 {
			last := st.Tokens[k-1]
			pending = []int32{last}
			if s.Pos() == s.ContextSize() && !v.IsEOG(last) && (n <= 0 || k < n) {
				out.WriteString("\n")
				fmt.Fprintf(stderr, "generation stopped: the context is full (%d positions; -c sets its size)\n", s.ContextSize())
				return nil
			}
		}
	}
}
