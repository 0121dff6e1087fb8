package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// The REST upstream every configuration calls: a small, fast Go server, so
// that what is measured is what sits in front of it. It runs as a process
// of its own (the bench binary with the argument "upstream").
//
//	GET /orders/{id}      a small order, for the throughput runs
//	GET /shop/orders      50 orders of about 1 KB each, for the code-mode task
//	GET /shop/customers/{id}
func runUpstream(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("listening", ln.Addr().String())
	orders, customers := shopData()
	list, _ := json.Marshal(map[string]any{"count": len(orders), "orders": orders})
	byCustomer := make(map[string][]byte, len(customers))
	for _, c := range customers {
		b, _ := json.Marshal(c)
		byCustomer[c.ID] = b
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"status":"shipped","customer_id":"cus_007","total":128.4,"currency":"EUR","items":3}`, r.PathValue("id"))
	})
	mux.HandleFunc("GET /shop/orders", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(list)
	})
	mux.HandleFunc("GET /shop/customers/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, ok := byCustomer[r.PathValue("id")]
		if !ok {
			http.Error(w, `{"error":"no such customer"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	return http.Serve(ln, mux)
}

type customer struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Email   string `json:"email"`
	Tier    string `json:"tier"`
	Country string `json:"country"`
}

type item struct {
	SKU       string  `json:"sku"`
	Name      string  `json:"name"`
	Qty       int     `json:"qty"`
	UnitPrice float64 `json:"unit_price"`
}

type order struct {
	ID         string            `json:"id"`
	Status     string            `json:"status"`
	CustomerID string            `json:"customer_id"`
	CreatedAt  string            `json:"created_at"`
	Currency   string            `json:"currency"`
	Items      []item            `json:"items"`
	Subtotal   float64           `json:"subtotal"`
	Shipping   float64           `json:"shipping"`
	Total      float64           `json:"total"`
	Shipment   map[string]string `json:"shipment"`
	Notes      string            `json:"notes"`
}

// shopData is a deterministic shop: 50 orders of about 1 KB, 20 customers.
func shopData() ([]order, []customer) {
	names := []string{"Amara Okafor", "Léa Moreau", "Mateo García", "Yuki Tanaka", "Noah Schmidt", "Priya Raman",
		"Olivia Brown", "Lucas Rossi", "Sofia Lindqvist", "Kwame Mensah", "Elena Petrova", "Diego Silva",
		"Hannah Weber", "Arjun Mehta", "Chloé Dubois", "Jonas Berg", "Mia Kowalski", "Omar Haddad", "Aiko Sato", "Liam Walsh"}
	var customers []customer
	for i, n := range names {
		customers = append(customers, customer{
			ID: fmt.Sprintf("cus_%03d", i+1), Name: n,
			Email: strings.ToLower(strings.ReplaceAll(n, " ", ".")) + "@example.com",
			Tier:  []string{"standard", "gold", "platinum"}[i%3], Country: []string{"FR", "DE", "JP", "GB", "ES"}[i%5],
		})
	}
	products := []item{
		{SKU: "KIT-KETL-10", Name: "Gooseneck kettle 1 L, brushed steel", UnitPrice: 64.9},
		{SKU: "BRW-V60-02", Name: "Ceramic dripper size 02, white", UnitPrice: 24.5},
		{SKU: "TEA-SEN-100", Name: "Sencha green tea, 100 g tin", UnitPrice: 12.8},
		{SKU: "GRN-HND-01", Name: "Hand grinder, conical burrs", UnitPrice: 89},
		{SKU: "CUP-STN-4", Name: "Stoneware cups, set of 4", UnitPrice: 36},
		{SKU: "FLT-PAP-100", Name: "Paper filters, 100 pack", UnitPrice: 6.4},
	}
	statuses := []string{"pending", "paid", "shipped", "delivered", "delivered", "cancelled"}
	var orders []order
	for i := 0; i < 50; i++ {
		o := order{
			ID: fmt.Sprintf("ord_%d", 1001+i), Status: statuses[i%len(statuses)],
			CustomerID: customers[(i*7)%len(customers)].ID,
			CreatedAt:  fmt.Sprintf("2025-%02d-%02dT%02d:%02d:00Z", 1+i%12, 1+(i*3)%28, (i*5)%24, (i*11)%60),
			Currency:   []string{"EUR", "GBP", "USD"}[i%3],
			Shipment: map[string]string{
				"carrier": []string{"DHL", "UPS", "La Poste"}[i%3], "tracking": fmt.Sprintf("TRK%09d", 7000000+i*7919),
				"street": fmt.Sprintf("%d Rue des Lilas", 3+i), "city": []string{"Lyon", "Berlin", "Osaka", "Leeds", "Sevilla"}[i%5],
				"postcode": fmt.Sprintf("%05d", 10000+i*37),
			},
			Notes: "Leave at the door if nobody answers; the customer asked for plastic-free packaging.",
		}
		for j := 0; j < 2+i%4; j++ {
			it := products[(i+j)%len(products)]
			it.Qty = 1 + (i+j)%3
			o.Items = append(o.Items, it)
			o.Subtotal += float64(it.Qty) * it.UnitPrice
		}
		// Shipping varies a little, so that no two totals are equal and
		// "the 3 highest" has one answer.
		o.Shipping = 4.9 + float64(i)/100
		o.Subtotal = float64(int(o.Subtotal*100+0.5)) / 100
		o.Total = float64(int((o.Subtotal+o.Shipping)*100+0.5)) / 100
		orders = append(orders, o)
	}
	return orders, customers
}

func init() {
	if len(os.Args) > 2 && os.Args[1] == "upstream" {
		if err := runUpstream(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}
