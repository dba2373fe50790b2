// Command devdb is the development database launcher: it embeds FerretDB
// v1.24.2 (a MongoDB wire-protocol server) so that `npm start` and `npm test`
// run against a real MongoDB protocol server on machines without mongod.
//
// It uses FerretDB's embeddable package because `go install .../cmd/ferretdb`
// builds a binary that panics at start-up (FerretDB issue 2982).
//
// On success it prints exactly one line to stdout, `MONGODB_URI=<uri>`, once
// the listener accepts connections. It exits 0 on SIGTERM/SIGINT and, with
// -watch-stdin, when its standard input closes (its parent process died).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	backend := flag.String("backend", "sqlite", "storage backend: sqlite or postgresql")
	dataDir := flag.String("sqlite-dir", ".data/ferretdb", "SQLite data directory (created when missing)")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL URL for the postgresql backend (database must exist)")
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on; port 0 picks a free port")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	watchStdin := flag.Bool("watch-stdin", false, "exit when standard input reaches EOF")
	sqliteSync := flag.String("sqlite-synchronous", "normal", "SQLite synchronous pragma: normal (WAL-safe, no fsync per commit) or full")
	flag.Parse()

	if err := run(*backend, *dataDir, *pgURL, *listen, *logLevel, *sqliteSync, *watchStdin); err != nil {
		fmt.Fprintln(os.Stderr, "devdb:", err)
		os.Exit(1)
	}
}

func run(backend, dataDir, pgURL, listen, logLevel, sqliteSync string, watchStdin bool) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("bad -log-level %q", logLevel)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	var sqliteDir string
	cfg := &ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listen},
		Logger:   logger,
		Handler:  backend,
	}

	switch backend {
	case "sqlite":
		abs, err := filepath.Abs(dataDir)
		sqliteDir = abs
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return fmt.Errorf("cannot create SQLite directory: %w", err)
		}
		if sqliteSync != "normal" && sqliteSync != "full" {
			return fmt.Errorf("bad -sqlite-synchronous %q (want normal or full)", sqliteSync)
		}
		// FerretDB requires a directory URI that ends with a slash. In WAL mode
		// synchronous=normal cannot corrupt the database; it only skips the
		// fsync per commit, which dominates write latency on a dev machine.
		q := url.Values{"_pragma": []string{"synchronous(" + sqliteSync + ")"}}
		cfg.SQLiteURL = (&url.URL{Scheme: "file", Opaque: strings.TrimSuffix(abs, "/") + "/", RawQuery: q.Encode()}).String()
	case "postgresql":
		if pgURL == "" {
			return errors.New("-postgresql-url is required for the postgresql backend")
		}
		cfg.PostgreSQLURL = pgURL
	default:
		return fmt.Errorf("unknown -backend %q (want sqlite or postgresql)", backend)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	if watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}

	f, err := ferretdb.New(cfg)
	if err != nil {
		return err
	}

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	if backend == "sqlite" {
		go indexIDs(ctx, sqliteDir, logger)
	}

	// MongoDBURI blocks until the listener is bound, so the line below is
	// printed only once clients can connect.
	fmt.Printf("MONGODB_URI=%s\n", f.MongoDBURI())

	return <-done
}
