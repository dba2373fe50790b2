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
// whole table. indexIDs adds, to every collection table, an index on the
// expression the queries use, so point reads by `_id` stay O(log n), and one
// on `_ferretdb_sjson->>'$._id'`, the `_id`'s text, on which our FerretDB
// patch (ferretdb-pushdown.patch) selects and orders `_id` ranges, so that a
// range read is an index range scan. Both expressions must stay exactly those
// of the patch's queries, or SQLite will not use the indexes. FerretDB keeps
// its own index list in its metadata and never sees these; dropping the
// collection drops the table and its indexes with it.
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

// The indexes ensureIDIndexes adds to each collection table: name suffix and
// expression. An index of that name is taken to be the right one: a change of
// expression needs a new name.
var idIndexes = [][2]string{
	{"__id_path", `_ferretdb_sjson->'$._id'`},  // _id equality and $in
	{"__id_text", `_ferretdb_sjson->>'$._id'`}, // _id ranges and their order (BINARY collation)
}

func ensureIDIndexes(ctx context.Context, db *sql.DB) error {
	var missing []string
	for _, ix := range idIndexes {
		missing = append(missing, fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'index' AND m.name = c.table_name || '%s')`, ix[0]))
	}
	rows, err := db.QueryContext(ctx, `SELECT c.table_name FROM _ferretdb_collections c WHERE `+strings.Join(missing, " OR "))
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
		for _, ix := range idIndexes {
			q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (%s)`, t+ix[0], t, ix[1])
			if _, err := db.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "no such table") {
				return err
			}
		}
	}
	return nil
}
