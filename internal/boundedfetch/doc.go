// Package boundedfetch makes HTTP requests bounded in time, size and
// redirects, with one wording of what went wrong, for the packages that read
// documents from servers they are configured with.
package boundedfetch
