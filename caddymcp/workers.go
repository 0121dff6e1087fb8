package caddymcp

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  worker.Command,
		Short: "Runs code mode executions for the Caddy process that started it",
		Long: `
Started by Caddy itself for the codemode handler's isolation process: it
reads code from its standard input, runs it in a fresh sandbox and writes
the result to its standard output, one execution at a time, and exits when
its standard input closes. It is not meant to be run by hand.`,
		Func: func(caddycmd.Flags) (int, error) {
			if err := worker.Serve(os.Stdin, os.Stdout); err != nil {
				return caddy.ExitCodeFailedStartup, err
			}
			return caddy.ExitCodeSuccess, nil
		},
	})
}

// isolationProcess is the isolation of every execution: a worker process.
const isolationProcess = "process"

// checkIsolation accepts process, and refuses in_process, which earlier
// versions offered, saying why.
func checkIsolation(isolation string) error {
	switch isolation {
	case "", isolationProcess:
		return nil
	case "in_process":
		return fmt.Errorf("isolation in_process is no longer offered: inside Caddy, a Go stack overflow or a fatal out of memory in one execution would end every site the process serves; every execution runs in a worker process (isolation process, the default)")
	}
	return fmt.Errorf("isolation %q: want %s", isolation, isolationProcess)
}

// workerPools holds the worker pools of codemode handlers, by their
// settings: a reload that keeps them keeps the workers.
var workerPools = caddy.NewUsagePool()

// workerPool is a pool in workerPools, with the logger of the handler
// that loaded it last: the one of the config running now.
type workerPool struct {
	*worker.Pool
	logger *atomic.Pointer[zap.Logger]
}

// Destruct lets the executions still running finish, as Caddy lets the
// requests of an old config finish after a reload; when Caddy exits, its
// servers have had their grace period, and what still runs is stopped.
func (p workerPool) Destruct() error {
	if caddy.Exiting() {
		p.Kill()
	} else {
		p.Close()
	}
	return nil
}

// loadWorkerPool returns the pool for these settings, started if new; the
// handler's Cleanup releases it.
func loadWorkerPool(maxMemory int64, workers int, logger *zap.Logger) (string, *worker.Pool, error) {
	key := fmt.Sprintf("%d/%d", maxMemory, workers)
	val, _, err := workerPools.LoadOrNew(key, func() (caddy.Destructor, error) {
		current := new(atomic.Pointer[zap.Logger])
		current.Store(logger) // before the first worker can fail
		p, err := worker.NewPool(worker.PoolConfig{
			MaxMemory: maxMemory,
			Workers:   workers,
			Notify:    workerNotice(current.Load),
		})
		if err != nil {
			return nil, err
		}
		return workerPool{p, current}, nil
	})
	if err != nil {
		return "", nil, err
	}
	pool := val.(workerPool)
	pool.logger.Store(logger)
	return key, pool.Pool, nil
}

// workerNotice logs what a pool says of its workers, at most once a second
// for a worker that cannot start (the pool retries on demand).
func workerNotice(loggerNow func() *zap.Logger) func(event string, pid int, detail string) {
	var lastStartFailure atomic.Int64
	return func(event string, pid int, detail string) {
		logger := loggerNow()
		if event == "worker_start_failed" {
			now := time.Now().UnixNano()
			if last := lastStartFailure.Load(); now-last < int64(time.Second) || !lastStartFailure.CompareAndSwap(last, now) {
				return
			}
			logger.Error("code mode worker", zap.String("event", event), zap.String("reason", detail))
			return
		}
		logger.Warn("code mode worker", zap.String("event", event), zap.Int("pid", pid), zap.String("reason", cutLogged(detail)))
	}
}

// provisionRunner sets up where executions run: in workers of a pool kept
// across reloads.
func (cm *CodeMode) provisionRunner() error {
	limits := codemode.Limits{
		Timeout:       time.Duration(cm.Timeout),
		MaxToolCalls:  cm.MaxToolCalls,
		MaxOutput:     int(cm.MaxOutput),
		MaxCodeSize:   int(cm.MaxCodeSize),
		MaxConcurrent: cm.MaxConcurrent,
		MaxMemory:     cm.MaxMemory,
	}
	if err := checkIsolation(cm.Isolation); err != nil {
		return err
	}
	maxMemory := cm.MaxMemory
	if maxMemory == 0 {
		maxMemory = worker.DefaultMemory
	}
	if maxMemory < worker.MinMemory {
		return fmt.Errorf("max_memory %d MiB: a worker process needs at least %d MiB", maxMemory>>20, worker.MinMemory>>20)
	}
	workers := cm.Workers
	if workers == 0 {
		workers = limits.WithDefaults().MaxConcurrent
	}
	key, pool, err := loadWorkerPool(maxMemory, workers, cm.logger)
	if err != nil {
		return err
	}
	cm.poolKey = key
	cm.runner = worker.NewRunner(limits, pool)
	return nil
}
