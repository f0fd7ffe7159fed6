package mqtt

import "sync"

// Running is the brokers of one kind that this process started, by their
// MQTT endpoint URL, so that a driver opened on an endpoint finds the
// broker behind it (its administration: what it holds, the purge, its
// settings per case). A driver on a URL no broker of this process serves
// finds none: a broker reached by --url, which pslab does not manage.
// Each broker package keeps one; the zero value is empty and ready.
type Running[B any] struct{ m sync.Map }

// Add notes b as serving url.
func (r *Running[B]) Add(url string, b B) { r.m.Store(url, b) }

// Remove forgets the broker serving url.
func (r *Running[B]) Remove(url string) { r.m.Delete(url) }

// Lookup is the broker serving url; the zero B (nil for a pointer) when
// there is none.
func (r *Running[B]) Lookup(url string) B {
	v, ok := r.m.Load(url)
	if !ok {
		var zero B
		return zero
	}
	return v.(B)
}
