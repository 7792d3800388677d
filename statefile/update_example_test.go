package statefile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/offmain/offmain/statefile"
)

// Two parts of an app own different fields of one settings file. Each
// changes only its own field with Update, so neither drops the other's
// change (DataStore's updateData, SharedPreferences' edit().apply()).
func ExampleFile_Update() {
	dir, _ := os.MkdirTemp("", "statefile-example")
	defer os.RemoveAll(dir)
	store := statefile.NewStore(statefile.Options{})
	settings, _ := statefile.OpenWith(store, filepath.Join(dir, "settings.json"), statefile.FileOptions[Settings]{
		Default: func() Settings { return Settings{Theme: "light", Panes: map[string]string{}} },
	})

	// The theme menu:
	settings.Update(func(s Settings) (Settings, error) {
		s.Theme = "dark"
		return s, nil
	})
	// The layout code, at the same time:
	settings.Update(func(s Settings) (Settings, error) {
		s.Panes["left"] = "files" // s is the Update's own: changing it in place is fine
		return s, nil
	})

	got, err := settings.Load(context.Background())
	fmt.Println(got.Theme, got.Panes["left"], err)
	store.Close(context.Background())
	// Output: dark files <nil>
}

// A file format that changed twice: version 0 had {"name"}, version 1
// renamed it "title", version 2 made it a list. The first Load migrates
// the file on disk, keeping the old one as "<name>.v0.bak" until the new
// one is durable.
func ExampleOpenWith_migrations() {
	dir, _ := os.MkdirTemp("", "statefile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "layout.json")
	os.WriteFile(path, []byte(`{"name":"chats"}`), 0o600) // written by an old release

	type layout struct {
		Version int      `json:"version"`
		Titles  []string `json:"titles"`
	}
	rename := func(data []byte) ([]byte, error) {
		var v0 struct{ Name string }
		if err := json.Unmarshal(data, &v0); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"title": v0.Name}) // the version is set for us
	}
	toList := func(data []byte) ([]byte, error) {
		var v1 struct{ Title string }
		if err := json.Unmarshal(data, &v1); err != nil {
			return nil, err
		}
		return json.Marshal(layout{Version: 2, Titles: []string{v1.Title}})
	}
	store := statefile.NewStore(statefile.Options{})
	f, _ := statefile.OpenWith(store, path, statefile.FileOptions[layout]{
		Default:    func() layout { return layout{Version: 2} }, // saved values carry the newest version
		Migrations: []statefile.Migration{{Version: 1, Migrate: rename}, {Version: 2, Migrate: toList}},
	})
	got, err := f.Load(context.Background())
	fmt.Println(got.Version, got.Titles, err)
	store.Close(context.Background())
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// 2 [chats] <nil>
	// {"version":2,"titles":["chats"]}
}

// A corrupt file is moved aside and replaced by a value rebuilt from
// elsewhere, instead of starting from nothing.
func ExampleFileOptions_onCorrupt() {
	dir, _ := os.MkdirTemp("", "statefile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "settings.json")
	os.WriteFile(path, []byte(`{"theme":"da`), 0o600) // torn by some other tool

	store := statefile.NewStore(statefile.Options{})
	f, _ := statefile.OpenWith(store, path, statefile.FileOptions[Settings]{
		OnCorrupt: func(err *statefile.CorruptError) (Settings, error) {
			fmt.Println("bytes kept aside:", filepath.Dir(err.Aside) == dir)
			return Settings{Theme: "from-backup"}, nil
		},
	})
	got, err := f.Load(context.Background())
	fmt.Println(got.Theme, err)
	store.Close(context.Background())
	// Output:
	// bytes kept aside: true
	// from-backup <nil>
}
