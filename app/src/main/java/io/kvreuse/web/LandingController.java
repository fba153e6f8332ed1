package io.kvreuse.web;

import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;

/** The landing page: what this server is and where its API and dashboard live. */
@Controller
class LandingController {

    @GetMapping("/")
    String landing(Model model) {
        model.addAttribute("version", LandingController.class.getPackage().getImplementationVersion());
        return "landing";
    }
}
