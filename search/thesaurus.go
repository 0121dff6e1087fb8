package search

import (
	"strings"
	"sync"
)

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

// topicGroups are the words of one subject that a request and a tool use
// for each other: one asks for the temperature in Miami and the tool
// gives the weather, one wants a flat to rent and the tool finds houses.
// A query word also matches its topic's other words, at topicDiscount:
// they are related, not the same. The topics are those of everyday tool
// catalogs (MCP servers, chat plugins, web APIs), not of one catalog.
var topicGroups = []string{
	// weather and nature
	"weather forecast temperature rain rainy snow snowfall wind windy humidity sunny cloudy storm precipitation climate heatwave celsius fahrenheit",
	"air pollution smog pollen",
	"earthquake quake seismic tremor tsunami",
	"space astronomy astronaut nasa planet galaxy telescope cosmos universe satellite rocket mars",
	"plant garden gardening flower succulent houseplant",
	"animal pet dog cat",
	// money
	"finance financial stock equity market invest investor investment investing portfolio trading trader dividend earnings fund etf ticker nasdaq bond shares",
	"crypto cryptocurrency bitcoin btc ethereum eth dogecoin coin token nft blockchain defi altcoin xrp solana web3",
	"currency forex exchange convert conversion money dollar usd euro eur yen jpy pound gbp rupee inr yuan cny peso",
	"price cost pricing fee quote",
	"cheap affordable budget inexpensive bargain discount deal",
	"discount coupon promo voucher sale deal bargain",
	"tax taxes vat",
	"loan mortgage credit repayment interest debt",
	"charity nonprofit donation donate fundraising philanthropy",
	"company business corporation corporate firm enterprise startup brand",
	// news and society
	"news headline article story journalism press breaking report current events",
	"politics political government policy election president congress parliament senate",
	"law legal legislation statute regulation court attorney lawyer lawsuit",
	"trend trending popular hot viral top rank ranking",
	// speech and language
	"speech speak spoken voice audio sound pronounce pronunciation say talk",
	"language translate translation translator phrase french spanish german italian portuguese chinese japanese korean russian arabic english",
	"music song playlist album artist band singer track genre concert melody",
	"podcast episode",
	// home and work
	"house home housing apartment flat condo property estate realtor listing",
	"rent rental lease tenant landlord",
	"buy purchase purchasing order shop",
	"job career employment employer hire hiring recruit recruiting vacancy opening position salary internship talent work",
	"resume cv",
	"interview hiring candidate",
	// travel and food
	"travel trip vacation holiday tour tourism tourist journey itinerary destination",
	"hotel accommodation lodging motel hostel resort stay booking",
	"flight airline airport fly plane",
	"attraction landmark sightseeing museum",
	"theme park amusement disneyland ride rollercoaster",
	"queue wait waiting",
	"food meal dish cuisine recipe cook cooking eat dinner lunch breakfast nutrition diet calorie ingredient",
	"restaurant dining dine reservation cafe eatery",
	"car vehicle automobile auto ev dealer",
	"map location place address coordinates latitude longitude geocode direction route navigation nearby gps",
	"train railway rail station ticket",
	// entertainment and learning
	"movie film cinema tv television show series episode watch streaming",
	"book novel author reading ebook literature",
	"game gaming play player console",
	"sport football soccer basketball nba nfl nhl mlb baseball hockey tennis match league standings",
	"fitness workout exercise gym",
	"course class lesson tutorial learn learning study teach teacher education school university lecture curriculum training student",
	"research paper academic scholar scholarly study journal publication arxiv pubmed science scientific literature",
	"health medical medicine disease symptom treatment drug doctor clinical patient cancer therapy gene",
	"astrology horoscope zodiac astrological aries taurus gemini leo virgo libra scorpio sagittarius capricorn aquarius pisces",
	"gift present birthday anniversary",
	"review rating feedback opinion",
	"product item goods merchandise retail ecommerce store",
	// computing
	"code coding program programming software developer repository github library snippet function algorithm source",
	"website site web webpage page url link homepage",
	"domain dns whois registrar hostname",
	"seo optimization optimize keyword traffic visibility backlink serp",
	"ad advert advertising advertisement marketing campaign promotion ppc",
	"browser browse navigate click page",
	"screenshot capture snapshot",
	"pdf document doc docx paper",
	"presentation ppt pptx powerpoint slide deck",
	"spreadsheet excel xlsx sheet csv workbook",
	"chart graph plot diagram visualize visualization",
	"video youtube clip",
	"summarize summary overview digest",
	"calculate calculation calculator compute math arithmetic equation formula square root sqrt percentage",
	"time clock timezone hour",
	"calendar schedule event meeting appointment",
	"note reminder todo",
	"email mail inbox gmail",
	"social twitter tweet instagram facebook",
	"apple iphone ipad mac macos ios",
	"android google pixel",
	"save write export",
	"qr barcode",
	"memory remember recall flashcard",
}

// topicDiscount scales a match through topicGroups.
const topicDiscount = 0.4

// acronyms are short forms a request uses for several words of the API.
var acronyms = map[string]string{
	"pr":  "pull request",
	"prs": "pull requests",
	"ci":  "workflow run",
	"sha": "commit",
}

// related is a word's thesaurus entry: another word and how much a match
// of it weighs.
type related struct {
	term   string
	weight float64
}

// thesaurus maps each index term to the other terms of its groups, with
// the weight of the closest group they share. Built on first use: a
// program that links search without searching (a code-mode worker) does
// not hold it.
var thesaurus = sync.OnceValue(func() map[string][]related {
	m := map[string][]related{}
	link := func(groups []string, weight float64) {
		for _, g := range groups {
			var terms []string
			for _, w := range strings.Fields(g) {
				if t := stem(w); !contains(terms, t) {
					terms = append(terms, t)
				}
			}
			for _, t := range terms {
			others:
				for _, o := range terms {
					if o == t {
						continue
					}
					for i, r := range m[t] {
						if r.term == o {
							m[t][i].weight = max(r.weight, weight)
							continue others
						}
					}
					m[t] = append(m[t], related{o, weight})
				}
			}
		}
	}
	link(synonymGroups, synonymDiscount)
	link(topicGroups, topicDiscount)
	return m
})

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
