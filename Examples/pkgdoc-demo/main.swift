print("pkgdoc-demo")
