// Package suggest finds the names closest to one that names nothing, for
// errors that say what was meant.
package suggest
