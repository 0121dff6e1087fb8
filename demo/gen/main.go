//go:build ignore

// Command gen writes the demo shop's REST API data under demo/api: 20
// customers and 50 orders, with list files for the endpoints that
// Caddyfile.example serves. The output is deterministic; run it from the
// repository root after changing it:
//
//	go run demo/gen/main.go
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// money is an amount in minor units (cents), written as a JSON number with
// two decimals, so 4990 is 49.90.
type money int64

func (m money) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%d.%02d", m/100, m%100)), nil
}

type address struct {
	Name       string `json:"name"`
	Line1      string `json:"line1"`
	Line2      string `json:"line2,omitempty"`
	City       string `json:"city"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

type customer struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Email          string  `json:"email"`
	Phone          string  `json:"phone"`
	Tier           string  `json:"tier"`
	Currency       string  `json:"currency"`
	MarketingOptIn bool    `json:"marketing_opt_in"`
	Address        address `json:"address"`
	CreatedAt      string  `json:"created_at"`
	OrderCount     int     `json:"order_count"`
	LifetimeValue  money   `json:"lifetime_value"`
}

type item struct {
	SKU       string `json:"sku"`
	Name      string `json:"name"`
	Qty       int    `json:"qty"`
	UnitPrice money  `json:"unit_price"`
	LineTotal money  `json:"line_total"`
}

type shipping struct {
	Method         string  `json:"method"`
	Carrier        string  `json:"carrier"`
	TrackingNumber *string `json:"tracking_number"`
	ShippedAt      *string `json:"shipped_at"`
	DeliveredAt    *string `json:"delivered_at"`
	Address        address `json:"address"`
}

type payment struct {
	Method string `json:"method"`
	Brand  string `json:"brand"`
	Last4  string `json:"last4"`
	Status string `json:"status"`
}

type order struct {
	ID         string   `json:"id"`
	Status     string   `json:"status"`
	CustomerID string   `json:"customer_id"`
	CreatedAt  string   `json:"created_at"`
	UpdatedAt  string   `json:"updated_at"`
	Currency   string   `json:"currency"`
	Items      []item   `json:"items"`
	Subtotal   money    `json:"subtotal"`
	Shipping   money    `json:"shipping"`
	Tax        money    `json:"tax"`
	Total      money    `json:"total"`
	Payment    payment  `json:"payment"`
	Delivery   shipping `json:"delivery"`
	Note       string   `json:"note,omitempty"`
}

type orderSummary struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	CustomerID   string `json:"customer_id"`
	CustomerName string `json:"customer_name"`
	ItemCount    int    `json:"item_count"`
	Total        money  `json:"total"`
	Currency     string `json:"currency"`
	CreatedAt    string `json:"created_at"`
}

type customerSummary struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Country string `json:"country"`
	Tier    string `json:"tier"`
}

type place struct {
	country, currency, city, postal, street, phone string
	taxPercent                                     int64
}

var places = []place{
	{"GB", "GBP", "London", "N1 9GU", "Caledonian Road", "+44 20 7946 0", 20},
	{"GB", "GBP", "Manchester", "M4 1HN", "Thomas Street", "+44 161 496 0", 20},
	{"DE", "EUR", "Berlin", "10435", "Kastanienallee", "+49 30 901820", 19},
	{"DE", "EUR", "Hamburg", "20357", "Schanzenstraße", "+49 40 428280", 19},
	{"FR", "EUR", "Lyon", "69002", "Rue Mercière", "+33 4 72 10 3", 20},
	{"NL", "EUR", "Utrecht", "3511 LX", "Oudegracht", "+31 30 286 0", 21},
	{"ES", "EUR", "Valencia", "46001", "Carrer de Cavallers", "+34 963 100 ", 21},
	{"US", "USD", "Portland", "97209", "NW Glisan St", "+1 503-555-01", 0},
	{"US", "USD", "Austin", "78704", "S Congress Ave", "+1 512-555-01", 0},
}

var names = []string{
	"Amara Okafor", "Jonas Becker", "Léa Moreau", "Sanne de Vries", "Mateo García",
	"Priya Raman", "Oliver Hughes", "Chloé Laurent", "Felix Wagner", "Grace Kim",
	"Lucía Fernández", "Daan Visser", "Hannah Schmidt", "Marcus Johnson", "Isla MacLeod",
	"Noah Dubois", "Emma Janssen", "Tomás Ruiz", "Aisha Bello", "Ethan Brooks",
}

// emails are ASCII forms of names, in the same order.
var emails = []string{
	"amara.okafor", "jonas.becker", "lea.moreau", "sanne.devries", "mateo.garcia",
	"priya.raman", "oliver.hughes", "chloe.laurent", "felix.wagner", "grace.kim",
	"lucia.fernandez", "daan.visser", "hannah.schmidt", "marcus.johnson", "isla.macleod",
	"noah.dubois", "emma.janssen", "tomas.ruiz", "aisha.bello", "ethan.brooks",
}

// homes index places, chosen so each name lives somewhere plausible.
var homes = []int{0, 2, 4, 5, 6, 7, 1, 4, 3, 8, 6, 5, 2, 8, 1, 4, 5, 6, 0, 7}

var products = []struct {
	sku, name string
	price     money
}{
	{"KIT-DRIP-01", "Ceramic pour-over dripper, size 02", 2400},
	{"KIT-KETL-10", "Gooseneck kettle 1 L, brushed steel", 6900},
	{"KIT-GRND-03", "Conical burr grinder, hand-cranked", 8900},
	{"BEAN-ETH-250", "Ethiopia Yirgacheffe beans 250 g", 1450},
	{"BEAN-COL-250", "Colombia Huila beans 250 g", 1290},
	{"BEAN-DEC-250", "Swiss Water decaf beans 250 g", 1350},
	{"TEA-SEN-100", "Sencha green tea 100 g", 1100},
	{"TEA-EGR-100", "Earl Grey loose leaf 100 g", 950},
	{"TEA-OOL-SMP", "Oolong sampler, 4 x 25 g", 1800},
	{"KIT-PRSS-08", "French press 800 ml", 3200},
	{"ACC-FLTR-100", "Paper filters 02, pack of 100", 650},
	{"ACC-SCAL-01", "Coffee scale with timer", 3900},
	{"ACC-MUG-EN", "Enamel mug 350 ml", 1500},
	{"ACC-WHSK-MT", "Bamboo matcha whisk set", 2700},
	{"ACC-CLN-TAB", "Descaling tablets, 12 pack", 850},
}

var statuses = []string{"pending", "paid", "shipped", "delivered", "cancelled"}

var notes = []string{
	"Please leave the parcel with the neighbour at number 12.",
	"Gift: no prices on the packing slip, please.",
	"Ring the bell twice, the buzzer is broken.",
}

func main() {
	rng := rand.New(rand.NewPCG(2025, 11))
	start := time.Date(2025, 9, 1, 8, 0, 0, 0, time.UTC)

	customers := make([]*customer, len(names))
	for i, name := range names {
		p := places[homes[i]]
		tiers := []string{"standard", "standard", "standard", "gold", "platinum"}
		customers[i] = &customer{
			ID:             fmt.Sprintf("cus_%03d", i+1),
			Name:           name,
			Email:          emails[i] + "@example.com",
			Phone:          fmt.Sprintf("%s%02d", p.phone, 10+i),
			Tier:           tiers[rng.IntN(len(tiers))],
			Currency:       p.currency,
			MarketingOptIn: rng.IntN(2) == 0,
			Address: address{
				Name:       name,
				Line1:      fmt.Sprintf("%d %s", 3+rng.IntN(180), p.street),
				City:       p.city,
				PostalCode: p.postal,
				Country:    p.country,
			},
			CreatedAt: start.AddDate(-1, 0, -rng.IntN(700)).Add(time.Duration(rng.IntN(86400)) * time.Second).Format(time.RFC3339),
		}
		if rng.IntN(4) == 0 {
			customers[i].Address.Line2 = fmt.Sprintf("Flat %d", 1+rng.IntN(30))
		}
	}

	var orders []*order
	at := start
	for n := 0; n < 50; n++ {
		at = at.Add(time.Duration(6+rng.IntN(30))*time.Hour + time.Duration(rng.IntN(3600))*time.Second)
		c := customers[rng.IntN(len(customers))]
		p := places[homes[indexOf(c.ID)]]
		o := &order{
			ID:         fmt.Sprintf("ord_%d", 1001+n),
			CustomerID: c.ID,
			CreatedAt:  at.Format(time.RFC3339),
			Currency:   c.Currency,
		}
		// Older orders have moved further along.
		switch age := 50 - n; {
		case age > 30:
			o.Status = pick(rng, "delivered", "delivered", "delivered", "cancelled")
		case age > 12:
			o.Status = pick(rng, "delivered", "shipped", "shipped", "cancelled")
		case age > 5:
			o.Status = pick(rng, "shipped", "paid", "paid")
		default:
			o.Status = pick(rng, "paid", "pending", "pending")
		}
		used := map[int]bool{}
		for k := 1 + rng.IntN(3); k > 0; k-- {
			i := rng.IntN(len(products))
			if used[i] {
				continue
			}
			used[i] = true
			pr := products[i]
			qty := 1 + rng.IntN(3)
			if pr.price > 5000 {
				qty = 1
			}
			o.Items = append(o.Items, item{SKU: pr.sku, Name: pr.name, Qty: qty, UnitPrice: pr.price, LineTotal: pr.price * money(qty)})
			o.Subtotal += pr.price * money(qty)
		}
		if o.Subtotal < 5000 {
			o.Shipping = 495
		}
		o.Tax = (o.Subtotal + o.Shipping) * money(p.taxPercent) / 100
		o.Total = o.Subtotal + o.Shipping + o.Tax

		brands := []string{"visa", "mastercard", "amex"}
		o.Payment = payment{Method: "card", Brand: brands[rng.IntN(len(brands))], Last4: fmt.Sprintf("%04d", rng.IntN(10000))}
		method := pick(rng, "standard", "standard", "express")
		carrier := map[string]string{"GB": "Royal Mail", "DE": "DHL", "FR": "Colissimo", "NL": "PostNL", "ES": "Correos", "US": "UPS"}[p.country]
		o.Delivery = shipping{Method: method, Carrier: carrier, Address: c.Address}
		updated := at.Add(time.Duration(5+rng.IntN(50)) * time.Minute)
		switch o.Status {
		case "pending":
			o.Payment.Status = "authorized"
		case "paid":
			o.Payment.Status = "captured"
		case "cancelled":
			o.Payment.Status = "voided"
		case "shipped", "delivered":
			o.Payment.Status = "captured"
			shipped := at.Add(time.Duration(20+rng.IntN(30)) * time.Hour)
			o.Delivery.ShippedAt = ptr(shipped.Format(time.RFC3339))
			o.Delivery.TrackingNumber = ptr(fmt.Sprintf("%s%09d", strings.ToUpper(carrier[:2]), rng.IntN(1_000_000_000)))
			updated = shipped
			if o.Status == "delivered" {
				delivered := shipped.Add(time.Duration(30+rng.IntN(70)) * time.Hour)
				o.Delivery.DeliveredAt = ptr(delivered.Format(time.RFC3339))
				updated = delivered
			}
		}
		o.UpdatedAt = updated.Format(time.RFC3339)
		if rng.IntN(6) == 0 {
			o.Note = notes[rng.IntN(len(notes))]
		}
		orders = append(orders, o)
		if o.Status != "cancelled" {
			c.OrderCount++
			c.LifetimeValue += o.Total
		}
	}

	dir := filepath.Join("demo", "api")
	if err := os.RemoveAll(dir); err != nil {
		log.Fatal(err)
	}

	byID := map[string]*customer{}
	var custList []customerSummary
	for _, c := range customers {
		byID[c.ID] = c
		write(filepath.Join(dir, "customers", c.ID+".json"), c)
		custList = append(custList, customerSummary{c.ID, c.Name, c.Email, c.Address.Country, c.Tier})
	}
	write(filepath.Join(dir, "customers.json"), map[string]any{"count": len(custList), "customers": custList})

	// Lists are newest first.
	sort.Slice(orders, func(i, j int) bool { return orders[i].CreatedAt > orders[j].CreatedAt })
	all := []orderSummary{}
	byStatus := map[string][]orderSummary{}
	byCustomer := map[string][]orderSummary{}
	for _, o := range orders {
		write(filepath.Join(dir, "orders", o.ID+".json"), o)
		s := orderSummary{o.ID, o.Status, o.CustomerID, byID[o.CustomerID].Name, len(o.Items), o.Total, o.Currency, o.CreatedAt}
		all = append(all, s)
		byStatus[o.Status] = append(byStatus[o.Status], s)
		byCustomer[o.CustomerID] = append(byCustomer[o.CustomerID], s)
	}
	write(filepath.Join(dir, "orders.json"), list(all))
	for _, st := range statuses {
		write(filepath.Join(dir, "orders", "by-status", st+".json"), list(byStatus[st]))
	}
	for _, c := range customers {
		write(filepath.Join(dir, "customers", c.ID, "orders.json"), list(byCustomer[c.ID]))
	}
}

func list(s []orderSummary) map[string]any {
	if s == nil {
		s = []orderSummary{}
	}
	return map[string]any{"count": len(s), "orders": s}
}

func indexOf(id string) int {
	var n int
	fmt.Sscanf(id, "cus_%d", &n)
	return n - 1
}

func pick(rng *rand.Rand, choices ...string) string { return choices[rng.IntN(len(choices))] }

func ptr(s string) *string { return &s }

func write(path string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
