package keycache

import (
	"container/list"
	"sync"
	"time"
)

// LRU is a bounded, concurrency-safe cache of key entries by hash, each
// with its own expiry. When full it drops the least recently used entry,
// so that a flood of new keys evicts only cold entries instead of clearing
// every replica's cache at once.
type LRU struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
}

type lruItem struct {
	hash    string
	e       Entry
	expires time.Time
}

// NewLRU returns an LRU holding at most size entries (at least 1).
func NewLRU(size int) *LRU {
	return &LRU{max: max(1, size), ll: list.New(), items: map[string]*list.Element{}}
}

// Put stores e for hash until expires.
func (c *LRU) Put(hash string, e Entry, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[hash]; ok {
		it := el.Value.(*lruItem)
		it.e, it.expires = e, expires
		c.ll.MoveToFront(el)
		return
	}
	c.items[hash] = c.ll.PushFront(&lruItem{hash: hash, e: e, expires: expires})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*lruItem).hash)
	}
}

// Get returns the entry of hash if present and not expired at now.
func (c *LRU) Get(hash string, now time.Time) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[hash]
	if !ok {
		return Entry{}, false
	}
	it := el.Value.(*lruItem)
	if !now.Before(it.expires) {
		c.ll.Remove(el)
		delete(c.items, hash)
		return Entry{}, false
	}
	c.ll.MoveToFront(el)
	return it.e, true
}

// Delete drops hash.
func (c *LRU) Delete(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[hash]; ok {
		c.ll.Remove(el)
		delete(c.items, hash)
	}
}

// DeleteFunc drops every entry for which drop is true and returns how many
// it dropped. It visits each entry under the lock: it is for rare
// operations (a key revocation), not the request path.
func (c *LRU) DeleteFunc(drop func(Entry) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if it := el.Value.(*lruItem); drop(it.e) {
			c.ll.Remove(el)
			delete(c.items, it.hash)
			n++
		}
		el = next
	}
	return n
}

// Clear drops everything.
func (c *LRU) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	clear(c.items)
}

// Len is the number of entries held.
func (c *LRU) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
