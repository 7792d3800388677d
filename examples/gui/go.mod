module github.com/offmain/offmain/examples/gui

go 1.26.0

replace (
	github.com/offmain/offmain => ../..
	github.com/offmain/offmain/examples/internal => ../internal
)

require (
	gioui.org v0.10.3
	github.com/jezek/xgb v1.1.1
	github.com/offmain/offmain v0.0.0-00010101000000-000000000000
	github.com/offmain/offmain/examples/internal v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require (
	gioui.org/shader v1.0.9 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/go-text/typesetting v0.3.5 // indirect
	github.com/godbus/dbus/v5 v5.2.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
	golang.org/x/exp/shiny v0.0.0-20250408133849-7e4ce0ab07d0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
