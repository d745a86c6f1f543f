enum PackageRemoteNamespace {}
