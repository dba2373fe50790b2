package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver FerretDB itself uses
)

// FerretDB v1's SQLite backend filters by `_id` with the expression
// `_ferretdb_sjson->'$._id'` but indexes `_ferretdb_sjson->"_id"`, so SQLite
// cannot use the index and every point read, update and delete scans the
// whole table. indexIDs adds an index on the expression the queries use, to
// every collection table, so point reads by `_id` stay O(log n). FerretDB
// keeps its own index list in its metadata and never sees this one; dropping
// the collection drops the table and its indexes with it.
func indexIDs(ctx context.Context, dir string, logger *slog.Logger) {
	dbs := map[string]*sql.DB{}
	defer func() {
		for _, db := range dbs {
			db.Close()
		}
	}()

	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()

	for {
		files, _ := filepath.Glob(filepath.Join(dir, "*.sqlite"))
		seen := map[string]bool{}
		for _, f := range files {
			seen[f] = true
			db := dbs[f]
			if db == nil {
				var err error
				db, err = sql.Open("sqlite", "file:"+f+"?_pragma=busy_timeout(10000)")
				if err != nil {
					continue
				}
				db.SetMaxOpenConns(1)
				dbs[f] = db
			}
			if err := ensureIDIndexes(ctx, db); err != nil && ctx.Err() == nil {
				logger.Debug("id index", "file", f, "error", err)
			}
		}
		// Databases dropped by clients: let go of their files.
		for f, db := range dbs {
			if !seen[f] {
				db.Close()
				delete(dbs, f)
			}
		}

		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func ensureIDIndexes(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT c.table_name FROM _ferretdb_collections c
		WHERE NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'index' AND m.name = c.table_name || '__id_path')`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil // FerretDB has not created its metadata yet
		}
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()

	for _, t := range tables {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, t+"__id_path", t)
		if _, err := db.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "no such table") {
			return err
		}
	}
	return nil
}

