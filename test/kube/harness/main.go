// Command kube-harness runs the Kubernetes control plane that the project's real-API test suites
// start on loopback: kube-apiserver, kube-controller-manager and kubectl from the Kubernetes
// release named in go.mod, and etcd from the etcd server release that Kubernetes release is built
// against. One binary, so the packages they share are compiled once.
//
// It dispatches on the name it is called by (scripts/test-assets/kube-assets.sh links kube-apiserver,
// kube-controller-manager, kubectl and etcd to it) or on its first argument:
//
//	kube-harness kube-apiserver --etcd-servers=... ...
//	kube-harness version
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

var commands = map[string]func(args []string) int{
	"kube-apiserver": func([]string) int { return cli.Run(apiserver.NewAPIServerCommand()) },
	"kube-controller-manager": func([]string) int {
		return cli.Run(controllermanager.NewControllerManagerCommand())
	},
	"kubectl": func([]string) int {
		if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
			// kubectl's own way out: the error printed as kubectl prints it, and exit code 1.
			cmdutil.CheckErr(err)
		}
		return 0
	},
	"etcd": func(args []string) int {
		etcdmain.Main(append([]string{"etcd"}, args...))
		return 0
	},
	"version": func([]string) int {
		fmt.Println(versions())
		return 0
	},
}

// versions names the Kubernetes and etcd releases built in, from the module build information.
func versions() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var parts []string
	for _, dep := range info.Deps {
		switch dep.Path {
		case "k8s.io/kubernetes", "go.etcd.io/etcd/server/v3":
			parts = append(parts, dep.Path+" "+dep.Version)
		}
	}
	return strings.Join(parts, ", ")
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if _, ok := commands[name]; !ok {
		if len(args) == 0 {
			fmt.Fprintln(os.Stderr, "usage: kube-harness kube-apiserver|kube-controller-manager|kubectl|etcd|version [flags]")
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	run, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kube-harness: unknown command %q\n", name)
		os.Exit(2)
	}
	// The cobra commands read os.Args; they see the command's own flags only.
	os.Args = append([]string{name}, args...)
	os.Exit(run(args))
}
