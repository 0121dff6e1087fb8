package search

import "strings"

// A query says what a person wants in their words; an API's tools say what
// they do in the API's words. The thesaurus bridges the commonest gaps of
// web APIs: the verbs of reading and writing, and the nouns every API
// renames. A query word also matches its group's other words, at
// synonymDiscount; it never adds words the query did not imply.
const synonymDiscount = 0.6

// synonymGroups are groups of words used for one another in web APIs and
// their users' requests. A word may sit in several groups.
var synonymGroups = []string{
	// reading
	"get fetch read retrieve show see display look",
	"list show all enumerate browse",
	"search find look lookup query locate discover",
	"download export fetch",
	// writing
	"create add new make open post register submit",
	"update edit modify change set patch alter",
	"delete remove drop destroy erase discard purge",
	"upload import attach",
	"start run trigger launch execute kick dispatch",
	"stop cancel abort halt terminate",
	"enable activate on",
	"disable deactivate off",
	"toggle switch flip",
	"close resolve finish complete",
	"merge combine land",
	"copy duplicate clone fork",
	"move transfer",
	"invite ask request",
	"assign give grant",
	"revoke withdraw",
	"send post notify deliver",
	"publish release share",
	"save store keep persist",
	"compress zip gzip pack",
	"repeat echo",
	"sum add total",
	// things
	"image picture photo icon logo",
	"small tiny little mini",
	"large big huge",
	"user account person people member developer",
	"organization org company",
	"repository repo",
	"issue bug ticket problem",
	"comment reply remark note",
	"file content document",
	"secret credential password token key",
	"setting config configuration preference option",
	"log logs logging",
	"webhook hook callback notification",
	"branch ref",
	"version release tag",
	"job task",
	"environment env variable",
	"error warning failure annotation",
	"star stargazer favorite",
	"me myself authenticated current signed logged",
	"permission access role collaborator",
	"limit quota",
	"team group",
	"message text",
}

// acronyms are short forms a request uses for several words of the API.
var acronyms = map[string]string{
	"pr":  "pull request",
	"prs": "pull requests",
	"ci":  "workflow run",
	"sha": "commit",
}

// thesaurus maps each index term to the other terms of its groups.
var thesaurus = func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		var terms []string
		for _, w := range strings.Fields(g) {
			if t := stem(w); !contains(terms, t) {
				terms = append(terms, t)
			}
		}
		for _, t := range terms {
			for _, o := range terms {
				if o != t && !contains(m[t], o) {
					m[t] = append(m[t], o)
				}
			}
		}
	}
	return m
}()

// expandAcronyms writes a query's acronyms out.
func expandAcronyms(query string) string {
	words := strings.Fields(query)
	changed := false
	for i, w := range words {
		if long, ok := acronyms[strings.ToLower(strings.Trim(w, ".,;:!?'\""))]; ok {
			words[i], changed = long, true
		}
	}
	if !changed {
		return query
	}
	return strings.Join(words, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
