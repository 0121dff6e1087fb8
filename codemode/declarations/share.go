package declarations

import (
	"strconv"
	"strings"
)

// declNamed is a type declared once under a name: a tool's output type,
// or an object type that one backend's schemas use more than once.
type declNamed struct {
	name   string
	rep    *tsType // the type, as first seen
	ref    *tsType // a tsRef to it
	count  int     // places it is used
	shared bool    // used in more than one place, and big enough to name
	order  int     // when it was first seen
	tools  []string
	// The property names it is the value of (or the items of, made
	// singular), and how often, to name it by.
	hints     map[string]int
	hintOrder []string
	// The comments of the properties it is the value of, and how often:
	// one that most share (docKey) is written once, above the type.
	docs     map[string]int
	docOrder []string
	docKey   string
	// documented counts the uses as a property's value.
	documented int
	full       bool    // declared in full (see plan)
	fit        typeFit // how, if so
}

// declSharing finds the types one backend's tools use more than once and
// declares each once: identical types (by what they print, comments
// included) are one.
type declSharing struct {
	d       *declWriter
	backend string
	ids     map[string]int  // a type's structure, its children by id, to its id
	nodeID  map[*tsType]int // types already given an id
	infos   map[int]*declNamed
	named   map[int]*declNamed // the ones declared under a name
	outputs map[*tsType]*declNamed
	tools   []declTool
	order   []*declNamed // the types to declare, in order
	argDocs map[string]bool
}

func newDeclSharing(d *declWriter, backend string, tools []declTool) *declSharing {
	s := &declSharing{d: d, backend: backend, ids: make(map[string]int), nodeID: make(map[*tsType]int),
		infos: make(map[int]*declNamed), named: make(map[int]*declNamed), outputs: make(map[*tsType]*declNamed), tools: tools, argDocs: make(map[string]bool)}
	for _, t := range tools {
		s.walk(t.in, "", "")
		if !tsIsUnknown(t.out) {
			s.walk(t.out, "", "")
			info := s.info(t.out)
			info.tools = append(info.tools, t.ident)
			s.outputs[t.out] = info
		}
	}
	// Names: the outputs in tool order, then the shared types in the order
	// they were first seen, so the names stay put as tools come and go.
	for _, t := range tools {
		info := s.outputs[t.out]
		if info == nil || info.name != "" {
			continue
		}
		info.name = s.outputName(info)
		s.named[s.nodeID[info.rep]] = info
	}
	var shared []*declNamed
	for id, info := range s.infos {
		info.shared = info.count >= 2 && info.rep.kind == tsObject && len(info.rep.props) > 0 &&
			len(tsInline(info.rep)) >= declShareMinSize
		if info.name == "" && info.shared {
			shared = append(shared, info)
			s.named[id] = info
		}
	}
	sortNamed(shared)
	for _, info := range shared {
		info.name = d.uniqueName(declPascalCase(backend) + info.hintName())
	}
	for _, info := range s.named {
		info.ref = &tsType{kind: tsRef, text: info.name, named: info}
		info.docKey = info.sharedDoc()
	}
	s.plan()
	return s
}

func sortNamed(infos []*declNamed) {
	// Few enough to sort by insertion, and no import for it.
	for i := 1; i < len(infos); i++ {
		for j := i; j > 0 && infos[j].order < infos[j-1].order; j-- {
			infos[j], infos[j-1] = infos[j-1], infos[j]
		}
	}
}

// id gives t and its parts an id each, the same for the same structure.
func (s *declSharing) id(t *tsType) int {
	if id, ok := s.nodeID[t]; ok {
		return id
	}
	var sig strings.Builder
	sig.WriteString(strconv.Itoa(int(t.kind)))
	sig.WriteByte(' ')
	sig.WriteString(strconv.Quote(t.text))
	sig.WriteString(" " + strconv.Itoa(t.minLen))
	child := func(tag string, c *tsType) {
		sig.WriteString(" " + tag)
		if c != nil {
			sig.WriteString(strconv.Itoa(s.id(c)))
		}
	}
	child("e", t.elem)
	child("i", t.index)
	for _, m := range t.members {
		child("m", m)
	}
	for _, p := range t.props {
		sig.WriteString(" p" + strconv.Quote(p.key) + strconv.FormatBool(p.optional) + strconv.Quote(strings.Join(p.doc.lines, "\n")))
		child("t", p.typ)
	}
	key := sig.String()
	id, ok := s.ids[key]
	if !ok {
		id = len(s.ids)
		s.ids[key] = id
	}
	s.nodeID[t] = id
	return id
}

func (s *declSharing) info(t *tsType) *declNamed {
	id := s.id(t)
	info := s.infos[id]
	if info == nil {
		info = &declNamed{rep: t, order: len(s.infos), hints: make(map[string]int), docs: make(map[string]int)}
		s.infos[id] = info
	}
	return info
}

// walk counts the uses of the object types in t, hint being the property
// whose value t is and doc its comment.
func (s *declSharing) walk(t *tsType, hint, doc string) {
	switch t.kind {
	case tsObject:
		if len(t.props) > 0 {
			info := s.info(t)
			info.count++
			if hint != "" {
				if info.hints[hint] == 0 {
					info.hintOrder = append(info.hintOrder, hint)
				}
				info.hints[hint]++
			}
			if hint != "" {
				info.documented++ // a property's value, with a comment or not
			}
			if doc != "" {
				if info.docs[doc] == 0 {
					info.docOrder = append(info.docOrder, doc)
				}
				info.docs[doc]++
			}
		}
		for _, p := range t.props {
			s.walk(p.typ, p.key, strings.Join(p.doc.lines, "\n"))
		}
		if t.index != nil {
			s.walk(t.index, declSingular(hint), "")
		}
	case tsArray:
		s.walk(t.elem, declSingular(hint), "")
	case tsTuple:
		for _, m := range t.members {
			s.walk(m, declSingular(hint), "")
		}
		if t.elem != nil {
			s.walk(t.elem, declSingular(hint), "")
		}
	case tsUnion:
		for _, m := range t.members {
			s.walk(m, hint, doc)
		}
	case tsIntersection:
		for _, m := range t.members {
			s.walk(m, hint, "")
		}
	}
}

// sharedDoc is the comment most of the properties a type is the value of
// have (more than half, and at least two).
func (info *declNamed) sharedDoc() string {
	for _, d := range info.docOrder {
		if n := info.docs[d]; n >= 2 && 2*n > info.documented {
			return d
		}
	}
	return ""
}

// hintName is the property name a shared type is most often the value
// of, in PascalCase.
func (info *declNamed) hintName() string {
	best := ""
	for _, h := range info.hintOrder {
		if best == "" || info.hints[h] > info.hints[best] {
			best = h
		}
	}
	if name := declHintName(best); name != "" {
		return name
	}
	return "Object"
}

// outputName names the output type of one tool as before
// (<Backend><Tool>Output), and one that several tools return after the
// start their names share ("issues_get", "issues_create": GithubIssue).
func (s *declSharing) outputName(info *declNamed) string {
	if len(info.tools) == 1 {
		return s.d.alias(s.backend, info.tools[0])
	}
	prefix := strings.Split(info.tools[0], "_")
	for _, t := range info.tools[1:] {
		words := strings.Split(t, "_")
		n := 0
		for n < len(prefix) && n < len(words) && prefix[n] == words[n] {
			n++
		}
		prefix = prefix[:n]
	}
	if len(prefix) > 0 {
		prefix[len(prefix)-1] = declSingular(prefix[len(prefix)-1])
		if name := declHintName(strings.Join(prefix, "_")); name != "" {
			return s.d.uniqueName(declPascalCase(s.backend) + name)
		}
	}
	return s.d.alias(s.backend, info.tools[0])
}

// output is the named type of a tool's result, nil if it has none.
func (s *declSharing) output(t declTool) *declNamed {
	return s.outputs[t.out]
}

// subst is t with its shared parts replaced by their names; t itself is
// replaced too unless it is the root of what is printed.
func (s *declSharing) subst(t *tsType, root bool) *tsType {
	if id, ok := s.nodeID[t]; ok && !root {
		if info := s.named[id]; info != nil && info.shared {
			return info.ref
		}
	}
	switch t.kind {
	case tsName, tsRef:
		return t
	}
	c := *t
	if t.elem != nil {
		c.elem = s.subst(t.elem, false)
	}
	if t.index != nil {
		c.index = s.subst(t.index, false)
	}
	if len(t.members) > 0 {
		c.members = make([]*tsType, len(t.members))
		for i, m := range t.members {
			c.members[i] = s.subst(m, false)
		}
	}
	if len(t.props) > 0 {
		c.props = make([]tsProp, len(t.props))
		for i, p := range t.props {
			p.typ = s.subst(p.typ, false)
			c.props[i] = p
		}
	}
	return &c
}

// plan decides which shared types are declared in full: the outputs
// always; the others when they fit declNamedBudget and what is left of
// the backend's declNamedPool, those that required members show first,
// each kind in the order the outputs and inputs show them (breadth
// first). The others print as objects whose members are not shown.
func (s *declSharing) plan() {
	for _, info := range s.named {
		info.full = true
	}
	var order, required, optional []*declNamed
	state := make(map[*declNamed]int) // 1: queued as optional, 2: as required
	collect := func(t *tsType, indent, budget int, docs docMode, req bool) typeFit {
		f := fitType(t, indent, budget, docs)
		f.refs(func(info *declNamed, r bool) {
			switch {
			case r && req && state[info] < 2:
				state[info] = 2
				required = append(required, info)
			case state[info] == 0:
				state[info] = 1
				optional = append(optional, info)
			}
		})
		return f
	}
	for _, t := range s.tools {
		if info := s.outputs[t.out]; info != nil && info.fit.t == nil {
			order = append(order, info)
			info.fit = collect(s.subst(info.rep, true), 0, declOutputBudget, docsShort, true)
		}
	}
	for _, t := range s.tools {
		collect(s.subst(t.in, true), 1, declInputBudget, docsFull, true)
	}
	pool := declNamedPool
	decide := func(info *declNamed, req bool) {
		if len(info.tools) > 0 || info.fit.t != nil || !info.full {
			return // an output, planned above, or decided already
		}
		body := s.subst(info.rep, true)
		if f := fitType(body, 0, declNamedBudget, docsShort); f.size > declNamedBudget || f.size > pool {
			info.full = false
			return
		}
		info.fit = collect(body, 0, declNamedBudget, docsShort, req)
		pool -= info.fit.size
		order = append(order, info)
	}
	for i := 0; i < len(required); i++ {
		decide(required[i], true)
	}
	for i := 0; i < len(optional); i++ {
		decide(optional[i], false)
	}
	s.order = order
}

// printInput writes a tool's input type, as much of it as fits budget,
// each argument's comment once in the backend.
func (s *declSharing) printInput(t *tsType) {
	f := fitType(t, 1, declInputBudget, docsFull)
	p := f.printer(&s.d.b)
	p.once = &docOnce{seen: s.argDocs, record: true}
	p.write(f.t, 1, 1)
}

// declareAll writes the output types, in tool order, then the shared
// types they show, each once.
func (s *declSharing) declareAll() {
	for _, info := range s.order {
		if info.docKey != "" {
			// Its members' comments are short; so is its own.
			writeDoc(&s.d.b, "", []string{docOneLine(firstSentence(info.docKey), declMaxShortRunes)})
		}
		s.d.b.WriteString("type " + info.name + " = ")
		p := info.fit.printer(&s.d.b)
		p.write(info.fit.t, 0, 1)
		s.d.b.WriteString(";\n")
	}
}
