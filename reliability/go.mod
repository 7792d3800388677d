module github.com/offmain/offmain/reliability

go 1.26.0

replace github.com/offmain/offmain => ../

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/offmain/offmain v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
)
