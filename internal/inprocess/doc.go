// Package inprocess serves an HTTP request through a handler of this
// process as a loopback connection to it would be served.
package inprocess
