package caddymcp

import (
	"slices"

	"go.uber.org/zap"
)

// maxClientText is how much of a tool description, and of a server's
// instructions, Claude Code (since v2.1) and the clients that copy it show
// the model: 2 KB. What the gateway writes or imports stays within it; an
// operator's own longer text is sent as written, with a warning at load.
const maxClientText = 2048

// warnLongTexts warns, at load, of the operator's texts that clients will
// cut: the server's instructions, and tool descriptions by tool name.
func warnLongTexts(logger *zap.Logger, instructions string, descriptions map[string]string) {
	if len(instructions) > maxClientText {
		logger.Warn("the instructions are longer than clients show; put what matters in the first 2 KB",
			zap.Int("bytes", len(instructions)), zap.Int("shown", maxClientText))
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range descriptions {
			if !yield(name) {
				return
			}
		}
	}) {
		if n := len(descriptions[name]); n > maxClientText {
			logger.Warn("a tool description is longer than clients show; put what matters in the first 2 KB",
				zap.String("tool", name), zap.Int("bytes", n), zap.Int("shown", maxClientText))
		}
	}
}
