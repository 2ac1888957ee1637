// Package redisconn opens traced Redis clients from REDIS_URL.
package redisconn

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
)

// Open connects to url and waits up to wait for the server to answer.
func Open(ctx context.Context, url string, wait time.Duration) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	// Fail fast when Redis is down, so that callers reach their fallbacks
	// (the gateway's in-process limits, the revocation outbox) within a
	// request's time rather than after go-redis's default three retries.
	// Values given in the URL (max_retries, dial_timeout) are kept.
	if opt.MaxRetries == 0 {
		opt.MaxRetries = 1
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = 2 * time.Second
	}
	rdb := redis.NewClient(opt)
	if err := redisotel.InstrumentTracing(rdb); err != nil {
		return nil, fmt.Errorf("redis tracing: %w", err)
	}
	deadline := time.Now().Add(wait)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err = rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return rdb, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = rdb.Close()
			return nil, fmt.Errorf("connect to redis: %w", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
