package mcpbackend

// Instructions returns the instructions of the backend's last initialize
// answer (how to use its tools: a filter syntax, say), as the backend
// wrote them; "" before the first connection.
func (b *Backend) Instructions() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.instructions
}

// setInstructions keeps the instructions of a new connection; b.mu is
// held. Version covers them: what is built from the tools may show them.
func (b *Backend) setInstructions(text string) {
	if text != b.instructions {
		b.instructions = text
		b.version.Add(1)
	}
}
